"""
Cost of a SMART training step (issue 17) against a plain step, on identical batches.

    GLUE_DIR=../shared/data/glue OMP_NUM_THREADS=1 python benchmarks/smart_step_benchmark.py \
        --batch-size 16 --steps 8

Four copies of the model of `training_configs/glue/mrpc.jsonnet` (default all-MiniLM-L6-v2)
start from the same weights: plain, and wrapped in `tft_smart` with the adversarial term only
(`proximal_weight` 0), the proximal term only (`adversarial_weight` 0), and both (the
`smart/mrpc.jsonnet` setting, lambda_s = mu = 1, one ascent step). A step is zero_grad,
forward, backward and an AdamW step (lr 3e-5) on a batch of the first MRPC training pairs
($GLUE_DIR/MRPC/train.tsv), read by the config's reader. In each round the four take the
same batch, in an order that rotates from round to round; after `--warmup` rounds, the ratio
of each one's median step time to the plain step's is its cost.
"""

import argparse
import copy
import itertools
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reader_benchmark import default_model  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CONFIG = os.path.join(ROOT, "training_configs/glue/mrpc.jsonnet")
VARIANTS = {
    "plain": None,
    "adversarial": {"adversarial_weight": 1.0, "proximal_weight": 0.0},
    "proximal": {"adversarial_weight": 0.0, "proximal_weight": 1.0},
    "both": {"adversarial_weight": 1.0, "proximal_weight": 1.0},
}


def build(model_name: str, train_file: str, batch_size: int, batches: int):
    """The four models and `batches` tensor batches of `batch_size` MRPC pairs."""
    os.environ["TFT_MODEL"] = model_name
    from allennlp.common import Params
    from allennlp.data import Batch, DatasetReader, Vocabulary
    from allennlp.models import Model

    import tft_allennlp  # noqa: F401
    from tft_allennlp.models.smart import SmartRegularizedModel

    params = Params.from_file(CONFIG)
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(itertools.islice(reader.read(train_file), batch_size * batches))
    vocab = Vocabulary.from_params(params.pop("vocabulary"), instances=instances)
    torch.manual_seed(0)
    plain = Model.from_params(vocab=vocab, params=params.pop("model"))
    models = {}
    for name, smart in VARIANTS.items():
        inner = copy.deepcopy(plain)
        models[name] = inner if smart is None else SmartRegularizedModel(vocab, inner, **smart)
    tensors = []
    for start in range(0, len(instances), batch_size):
        batch = Batch(instances[start : start + batch_size])
        batch.index_instances(vocab)
        tensors.append(batch.as_tensor_dict())
    return models, tensors


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=None, help="default: all-MiniLM-L6-v2 from PyPI")
    parser.add_argument("--glue-dir", default=os.environ.get("GLUE_DIR", "glue_data"))
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--steps", type=int, default=8, help="timed rounds")
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds first")
    args = parser.parse_args()
    model_name = args.model or default_model()
    train_file = os.path.join(args.glue_dir, "MRPC/train.tsv")
    rounds = args.warmup + args.steps
    models, batches = build(model_name, train_file, args.batch_size, rounds)
    optimizers = {
        name: torch.optim.AdamW(model.parameters(), lr=3e-5) for name, model in models.items()
    }
    for model in models.values():
        model.train()
    names = list(models)
    times = {name: [] for name in names}
    for index, tensors in enumerate(batches):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            started = time.perf_counter()
            optimizers[name].zero_grad()
            models[name](**tensors)["loss"].backward()
            optimizers[name].step()
            if index >= args.warmup:
                times[name].append(time.perf_counter() - started)
    shape = tuple(batches[0]["tokens"]["tokens"]["token_ids"].shape)
    lengths = [tuple(b["tokens"]["tokens"]["token_ids"].shape)[1] for b in batches]
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(
        f"model {model_name}, batches of {shape[0]} MRPC pairs ({min(lengths)}-{max(lengths)} "
        f"wordpieces), {args.steps} timed steps each after {args.warmup} warm-up, "
        f"{torch.get_num_threads()} threads"
    )
    print("| step | median seconds | cost (x plain step) |\n|---|---|---|")
    for name, median in medians.items():
        print(f"| {name} | {median:.3f} | {median / medians['plain']:.2f} |")


if __name__ == "__main__":
    main()
