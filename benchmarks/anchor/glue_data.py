"""
The GLUE examples the anchor benchmark's sides read: the same ones on both sides.
"""

import json
import os
import random

from glue_throughput_benchmark import read_examples

# The tasks the benchmark runs, and their folders under `--glue-dir`.
DIRECTORIES = {"mrpc": "MRPC", "stsb": "STS-B"}


def subsample(task: str, path: str, size: int):
    """The GLUE reader's subsample: the positions `random.Random(13370).sample` draws."""
    rows = read_examples(task, path)
    return [rows[i] for i in sorted(random.Random(13370).sample(range(len(rows)), size))]


def write_pairs(path: str, pairs: int, glue_dir: str) -> list:
    """Writes `pairs` MRPC training pairs as JSON lines; returns their gold labels."""
    rows = subsample("mrpc", os.path.join(glue_dir, "MRPC", "train.tsv"), pairs)
    with open(path, "w") as handle:
        for a, b, _ in rows:
            handle.write(json.dumps({"sentence1": a, "sentence2": b}) + "\n")
    return [str(label) for _, _, label in rows]
