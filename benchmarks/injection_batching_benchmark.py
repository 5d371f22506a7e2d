"""
Injection training steps on a real aligned corpus, with the injection configs' batching (groups
of 4 batches sorted by length, padding noise 0.1) against batches from sorted whole windows
(`bucket_batches` = window / batch size, no noise), as the multi-source grids make them.

    TFT_MODEL=... python benchmarks/injection_batching_benchmark.py CORPUS.jsonl --steps 20

The model, reader and optimizer are `training_configs/injection/tft.jsonnet`'s (one thread).
Steps of the two settings alternate after one warm-up batch each, so that both see the same
machine load; prints the seconds per step and the wordpiece slots (padding included) of each,
and their ratios.
"""

import argparse
import json
import os
import random
import time

import torch

CONFIG = os.path.join(os.path.dirname(__file__), "..", "training_configs/injection/tft.jsonnet")
SETTINGS = {
    "groups of 4 batches": {},
    "sorted whole windows": {"bucket_batches": 50, "padding_noise": 0.0},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", help="an aligned corpus (allennlp tft-align's JSON lines)")
    parser.add_argument("--steps", type=int, default=12)
    args = parser.parse_args()
    os.environ.setdefault("TFT_PARAPHRASE_CORPUS", args.corpus)
    from allennlp.common import Params
    from allennlp.data import DataLoader, DatasetReader, Vocabulary
    from allennlp.models import Model

    import tft_allennlp  # noqa: F401

    torch.set_num_threads(1)
    random.seed(1)
    torch.manual_seed(1)
    params = Params.from_file(CONFIG)
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    vocab = Vocabulary.from_params(params.pop("vocabulary"), instances=[])
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-5)
    batches = {}
    for name, extra in SETTINGS.items():
        loader_params = {"type": "tft_streaming", "batch_size": 100, "shuffle": True}
        loader_params.update(max_instances_in_memory=5000, **extra)
        loader = DataLoader.from_params(Params(loader_params), reader=reader, data_path=args.corpus)
        loader.index_with(vocab)
        batches[name] = iter(loader)
        next(batches[name])  # the first window is read here
    seconds = {name: 0.0 for name in SETTINGS}
    slots = {name: 0 for name in SETTINGS}
    for _ in range(args.steps):
        for name in SETTINGS:
            batch = next(batches[name])
            slots[name] += batch["tokens"]["tokens"]["token_ids"].numel()
            start = time.perf_counter()
            model(**batch)["loss"].backward()
            optimizer.step()
            optimizer.zero_grad()
            seconds[name] += time.perf_counter() - start
    first, second = SETTINGS
    result = {
        name: {"seconds_per_step": seconds[name] / args.steps, "wordpiece_slots": slots[name]}
        for name in SETTINGS
    }
    result["time ratio"] = seconds[first] / seconds[second]
    result["slots ratio"] = slots[first] / slots[second]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
