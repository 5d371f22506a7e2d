"""
Peak memory of a real `allennlp train training_configs/injection/tft.jsonnet` against the size
of the aligned corpus (issue: paper scale, "A streamed corpus").

    python benchmarks/train_memory_benchmark.py --pairs 100000 2000000 --batches 20

For each size, the benchmark writes a synthetic aligned corpus of that many pairs (the templates
of `reader_benchmark.py`, about 12 words a sentence) and a 200-pair validation file, then trains
the `tft` config for one epoch of `--batches` batches of 100 (the paper's batch) with the
default model, all-MiniLM-L6-v2, in a fresh `allennlp train` process, and reports the peak
resident memory of that process (`ru_maxrss` of the child). A streamed corpus keeps the peaks
of the two sizes within 10% of each other; a loader that holds the corpus would need about
140 KB per instance.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reader_benchmark import default_model, write_input  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CONFIG = os.path.join(ROOT, "training_configs/injection/tft.jsonnet")


def train(corpus: str, validation: str, batches: int, directory: str, overrides: dict) -> dict:
    """One `allennlp train` in a child process; its peak RSS (MB) and wall time."""
    settings = {
        "train_data_path": corpus,
        "validation_data_path": validation,
        "dataset_reader.part": "all",
        "validation_dataset_reader.part": "all",
        "data_loader.batches_per_epoch": batches,
        "trainer.num_epochs": 1,
        **overrides,
    }
    command = [
        sys.executable,
        "-m",
        "allennlp",
        "train",
        CONFIG,
        "-s",
        directory,
        "-f",
        "--include-package",
        "tft_allennlp",
        "-o",
        json.dumps(settings),
    ]
    environment = {
        **os.environ,
        "TFT_MODEL": default_model(),
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    with open(directory + ".log", "w") as log:
        subprocess.run(
            command, cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT, check=True
        )
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak <= before:
        raise RuntimeError(
            "The run's peak did not exceed an earlier child's; run one size per process."
        )
    return {"peak_mb": peak / 1024, "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, nargs="+", default=[100000, 2000000])
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--overrides", default="{}", help="JSON overrides of the config")
    args = parser.parse_args()
    if args.one:
        with tempfile.TemporaryDirectory() as directory:
            corpus, validation = (
                os.path.join(directory, "corpus.jsonl"),
                os.path.join(directory, "dev.jsonl"),
            )
            write_input("injection", corpus, args.pairs[0])
            write_input("injection", validation, 200)
            megabytes = os.path.getsize(corpus) / 2**20
            result = train(
                corpus,
                validation,
                args.batches,
                os.path.join(directory, "run"),
                json.loads(args.overrides),
            )
        print("RESULT", json.dumps({**result, "corpus_mb": megabytes}))
        return
    print(
        f"`allennlp train training_configs/injection/tft.jsonnet`, {args.batches} batches of 100, "
        f"overrides {args.overrides}"
    )
    print("| pairs | corpus file (MB) | peak RSS (MB) | wall seconds |\n|---|---|---|---|")
    peaks = {}
    for pairs in args.pairs:
        # A fresh process per size, so that ru_maxrss of its children is this size's alone.
        output = subprocess.run(
            [
                sys.executable,
                __file__,
                "--one",
                "--pairs",
                str(pairs),
                "--batches",
                str(args.batches),
                "--overrides",
                args.overrides,
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        result = json.loads(output.split("RESULT", 1)[1])
        peaks[pairs] = result["peak_mb"]
        print(
            f"| {pairs:,} | {result['corpus_mb']:.0f} | {result['peak_mb']:.0f} "
            f"| {result['seconds']:.0f} |",
            flush=True,
        )
    small, large = min(peaks), max(peaks)
    print(f"\npeak RSS ratio {large:,} vs {small:,} pairs: {peaks[large] / peaks[small]:.3f}")


if __name__ == "__main__":
    main()
