"""
The anchor benchmark's `padding` mode: padded wordpieces per real wordpiece in the batches of
one epoch over the task's `--train-size` examples (mean of 10 shufflings), and the standard
deviation of a batch's mean label, for each way of batching.
"""

import json
import os
import random
import statistics
from typing import List

from reader_benchmark import default_model

from anchor.processes import ROOT


def padding_main(args) -> None:
    import torch
    from allennlp.common import Params
    from allennlp.data import DatasetReader
    from transformers.trainer_pt_utils import get_length_grouped_indices

    import tft_allennlp  # noqa: F401
    from tft_allennlp.data_loaders.streaming_data_loader import StreamingDataLoader

    os.environ.setdefault("TFT_MODEL", args.model or default_model())
    os.environ["GLUE_DIR"] = args.glue_dir
    config = os.path.join(ROOT, "training_configs/glue", f"{args.task}.jsonnet")
    params = Params.from_file(config, json.dumps({"dataset_reader.train_size": args.train_size}))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    path = params.pop("train_data_path")
    instances = list(reader.read(path))
    lengths = [len(instance["tokens"]) for instance in instances]
    labels = [
        float(getattr(field, "label", None) or field.tensor)  # LabelField or TensorField
        for field in (instance["label"] for instance in instances)
    ]
    position = {id(instance): index for index, instance in enumerate(instances)}

    def summary(batches: List[List[int]]) -> tuple:
        padded = sum(len(batch) * max(lengths[i] for i in batch) for batch in batches)
        means = [statistics.mean(labels[i] for i in batch) for batch in batches]
        return padded / sum(lengths), statistics.pstdev(means)

    schemes = {
        "random batches": {"bucket_batches": 0},
        "groups of 4 batches, 10% noise (tft_streaming's default)": {"bucket_batches": 4},
        "whole windows, no noise (the GLUE configs)": {"bucket_batches": 100, "padding_noise": 0.0},
    }
    print(f"{args.task.upper()}, {len(instances)} training examples, batch 32")
    print("| batches | padded / real wordpieces | sd of a batch's mean label |\n|---|---|---|")
    for name, options in schemes.items():
        loader = StreamingDataLoader(
            reader, path, batch_size=32, shuffle=True, max_instances_in_memory=3200, **options
        )
        results = []
        for seed in range(10):
            random.seed(seed)
            batches = loader._batches(iter(instances))
            results.append(summary([[position[id(i)] for i in batch] for batch in batches]))
        print(
            f"| {name} | {statistics.mean(r[0] for r in results):.3f} | "
            f"{statistics.mean(r[1] for r in results):.3f} |"
        )
    results = []
    for seed in range(10):
        order = get_length_grouped_indices(
            lengths, 32, generator=torch.Generator().manual_seed(seed)
        )
        results.append(summary([order[i : i + 32] for i in range(0, len(order), 32)]))
    print(
        f"| HF Trainer, group_by_length | {statistics.mean(r[0] for r in results):.3f} | "
        f"{statistics.mean(r[1] for r in results):.3f} |"
    )
