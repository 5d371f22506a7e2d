"""
Training steps in float32 against bfloat16 autocast on the CPU (what `tft_mixed_precision` with
`"precision": "bfloat16"` does), on real data: a GLUE task's config and the injection config.

    TFT_MODEL=... GLUE_DIR=... python benchmarks/cpu_bfloat16_benchmark.py \
        --task mrpc --corpus runs/corpora/multisource.jsonl --steps 15

Each workload's model, reader, loader and optimizer are its shipped config's (one thread; the
injection batches from sorted whole windows, as the multi-source grids make them). The same
batches are trained in both precisions, alternating step by step, so that both see the same
machine load; prints seconds per step of each and their ratio. Whether the CPU has native
bfloat16 (AVX512-BF16 or AMX) is printed too: elsewhere autocast emulates it, slower.
"""

import argparse
import json
import os
import random
import time
from typing import Dict, List

import torch

CONFIGS = os.path.join(os.path.dirname(__file__), "..", "training_configs")


def workload(config: str, steps: int, overrides: Dict) -> tuple:
    """The model, an optimizer and `steps` batches of `config` (a path under training_configs)."""
    from allennlp.common import Params
    from allennlp.data import DataLoader, DatasetReader, Vocabulary
    from allennlp.models import Model

    params = Params.from_file(os.path.join(CONFIGS, config), json.dumps(overrides))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    vocabulary = params.pop("vocabulary", Params({}))
    # The injection config lists its labels; a GLUE task's come from its dev set.
    instances: List = []
    if "tokens_to_add" not in vocabulary:
        instances = list(reader.read(params["validation_data_path"]))
    vocab = Vocabulary.from_params(vocabulary, instances=instances)
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    data_path = params.pop("train_data_path")
    loader = DataLoader.from_params(params.pop("data_loader"), reader=reader, data_path=data_path)
    loader.index_with(vocab)
    batches = iter(loader)
    return (
        model,
        torch.optim.AdamW(model.parameters(), lr=5e-5),
        [next(batches) for _ in range(steps)],
    )


def compare(model, optimizer, batches) -> Dict[str, float]:
    """Seconds per step in each precision over the same batches, alternating."""
    seconds = {"float32": 0.0, "bfloat16": 0.0}
    for batch in batches:
        for precision in seconds:
            start = time.perf_counter()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bfloat16"):
                loss = model(**batch)["loss"]
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            seconds[precision] += time.perf_counter() - start
    result = {name: total / len(batches) for name, total in seconds.items()}
    result["speed-up"] = seconds["float32"] / seconds["bfloat16"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="mrpc", help="a GLUE config of training_configs/glue")
    parser.add_argument("--corpus", required=True, help="an aligned corpus for the injection")
    parser.add_argument("--steps", type=int, default=15)
    args = parser.parse_args()
    os.environ["TFT_PARAPHRASE_CORPUS"] = args.corpus
    import tft_allennlp  # noqa: F401

    torch.set_num_threads(1)
    random.seed(1)
    torch.manual_seed(1)
    results = {"native bfloat16": torch.ops.mkldnn._is_mkldnn_bf16_supported()}
    glue = workload(f"glue/{args.task}.jsonnet", args.steps, {})
    results[f"GLUE {args.task}"] = compare(*glue)
    sorted_windows = {"data_loader.bucket_batches": 50, "data_loader.padding_noise": 0.0}
    injection = workload("injection/tft.jsonnet", args.steps, sorted_windows)
    results["injection"] = compare(*injection)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
