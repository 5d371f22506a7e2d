"""
Injection training step vs a bare encoder step on identical batches (issue: scale and survive).

    python benchmarks/step_benchmark.py --batch-size 32 --steps 10

The injection model is built from `training_configs/injection/tft.jsonnet` (both heads, max
pooling, elaborate features) on instances that the injection reader makes from synthetic aligned
pairs. The bare step is a plain `transformers` `BertForSequenceClassification` forward, backward
and optimizer step on the same wordpiece ids, segment ids, mask and sentence labels. The two
steps alternate, after warm-up, and the ratio of median step times is the injection step's
throughput relative to the bare encoder's (target >= 0.95).
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reader_benchmark import default_model, write_input  # noqa: E402

CONFIG = os.path.join(os.path.dirname(__file__), "..", "training_configs/injection/tft.jsonnet")


def build(model_name: str, corpus: str, batch_size: int, steps: int):
    os.environ["TFT_MODEL"] = model_name
    from allennlp.common import Params
    from allennlp.data import Batch, DatasetReader, Vocabulary
    from allennlp.models import Model

    import tft_allennlp  # noqa: F401

    params = Params.from_file(CONFIG, '{"dataset_reader.part": "all"}')
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(corpus))[: batch_size * steps]
    vocab = Vocabulary.from_instances(instances)
    injector = Model.from_params(vocab=vocab, params=params.pop("model"))
    batches = []
    for start in range(0, len(instances), batch_size):
        batch = Batch(instances[start : start + batch_size])
        batch.index_instances(vocab)
        batches.append(batch.as_tensor_dict())
    return injector, batches


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=None, help="default: all-MiniLM-L6-v2 from PyPI")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    model_name = args.model or default_model()
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as directory:
        corpus = os.path.join(directory, "corpus.jsonl")
        write_input("injection", corpus, args.batch_size * args.steps)
        injector, batches = build(model_name, corpus, args.batch_size, args.steps)

    from transformers import BertForSequenceClassification

    bare = BertForSequenceClassification.from_pretrained(model_name, num_labels=2)
    optimizers = {
        "injection": torch.optim.Adam(injector.parameters(), lr=5e-5),
        "bare": torch.optim.Adam(bare.parameters(), lr=5e-5),
    }
    injector.train()
    bare.train()

    def injection_step(tensors):
        return injector(**tensors)["loss"]

    def bare_step(tensors):
        tokens = tensors["tokens"]["tokens"]
        output = bare(
            input_ids=tokens["token_ids"],
            attention_mask=tokens["mask"].long(),
            token_type_ids=tokens["type_ids"],
            labels=tensors["label"],
        )
        return output.loss

    steps = {"injection": injection_step, "bare": bare_step}
    times = {"injection": [], "bare": []}
    for index, tensors in enumerate(batches):
        for name in ("injection", "bare"):
            started = time.perf_counter()
            optimizers[name].zero_grad()
            steps[name](tensors).backward()
            optimizers[name].step()
            if index >= args.warmup:
                times[name].append(time.perf_counter() - started)
    shape = tuple(batches[0]["tokens"]["tokens"]["token_ids"].shape)
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(
        f"model {model_name}, batch {shape} (batch, wordpieces), "
        f"{len(times['bare'])} timed steps each, "
        f"{torch.get_num_threads()} threads"
    )
    print("| step | median seconds | instances/s |\n|---|---|---|")
    for name, median in medians.items():
        print(f"| {name} | {median:.3f} | {shape[0] / median:.1f} |")
    print(f"\ninjection / bare throughput ratio: {medians['bare'] / medians['injection']:.3f}")


if __name__ == "__main__":
    main()
