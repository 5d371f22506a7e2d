"""
Aligner throughput and memory (issue: phrase alignment, "Speed and scale").

    python benchmarks/align_benchmark.py speed --pairs 2000            # pairs/s at 1 and 2 workers
    python benchmarks/align_benchmark.py memory --pairs 2000 20000     # peak RSS per input size
    python benchmarks/align_benchmark.py links --pairs 500 --embeddings MODEL_DIR
        # pairs/s per core of each link source: lexical, and contextual embeddings with one
        # sentence per forward pass (as before issue 19) and a batch of 32, reading the last
        # layer or layer 4 (the layers above it dropped)

Sentences are synthetic, about 20 words, built from templates with a fixed seed, so every run
aligns the same text. Each measurement runs in a fresh process; results are printed as a
markdown table with the ratios that benchmarks/RESULTS.md reports.
"""

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

SUBJECTS = [
    "the young teacher",
    "a local farmer",
    "the city council",
    "my older brother",
    "the new manager",
    "a tired nurse",
]
VERBS = [
    ("bought", "purchased"),
    ("repaired", "fixed"),
    ("visited", "went to see"),
    ("described", "explained"),
    ("cleaned", "tidied up"),
]
OBJECTS = [
    "an old wooden house",
    "the broken kitchen window",
    "a small red car",
    "the annual budget report",
    "the empty train station",
]
PLACES = [
    "near the river",
    "in the north of the country",
    "after the long winter",
    "before the big meeting",
    "with two close friends",
]
TIMES = [
    ("last week", "a week ago"),
    ("on Monday morning", "early on Monday"),
    ("in the spring", "during the spring"),
]


def sentence_pairs(count: int, seed: int = 0):
    rng = random.Random(seed)
    for _ in range(count):
        subject, (verb, synonym), obj = rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS)
        place, (time_a, time_b) = rng.choice(PLACES), rng.choice(TIMES)
        first = f"{subject.capitalize()} {verb} {obj} {place} {time_a} because it was necessary."
        second = f"{time_b.capitalize()}, {subject} {synonym} {obj} {place} since it was needed."
        yield first, second


def write_input(path: str, count: int) -> None:
    with open(path, "w") as handle:
        handle.write("sentence1\tsentence2\n")
        for first, second in sentence_pairs(count):
            handle.write(f"{first}\t{second}\n")


def run_one(pairs: int, workers: int, aligner: str = "{}") -> None:
    """Aligns `pairs` synthetic pairs in this process; prints seconds and peak RSS (MB)."""
    from tft_allennlp.commands.align import align_file

    with tempfile.TemporaryDirectory() as directory:
        source, output = os.path.join(directory, "in.tsv"), os.path.join(directory, "out.jsonl")
        write_input(source, pairs)
        started = time.perf_counter()
        summary = align_file(
            source,
            output,
            spacy_model="en_core_web_sm",
            workers=workers,
            batch_size=64,
            aligner=json.loads(aligner) or None,
        )
        seconds = time.perf_counter() - started
    assert summary["pairs written"] == pairs
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"RESULT {pairs} {workers} {seconds:.2f} {peak_mb:.1f}")


def measure(pairs: int, workers: int, aligner: str = "{}"):
    result = subprocess.run(
        [sys.executable, __file__, "one", "--pairs", str(pairs), "--workers", str(workers)]
        + ["--aligner", aligner],
        capture_output=True,
        text=True,
        check=True,
    )
    line = [text for text in result.stdout.splitlines() if text.startswith("RESULT")][-1].split()
    return float(line[3]), float(line[4])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["speed", "memory", "links", "one"])
    parser.add_argument("--pairs", type=int, nargs="+", default=[2000])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--aligner", default="{}", help="PhraseAligner parameters (JSON)")
    parser.add_argument("--embeddings", help="links: a local Hugging Face checkpoint")
    parser.add_argument("--rounds", type=int, default=2, help="links: alternating rounds")
    args = parser.parse_args()
    if args.mode == "one":
        run_one(args.pairs[0], args.workers, args.aligner)
    elif args.mode == "links":
        pairs = args.pairs[0]
        sources = {
            "lexical": {},
            "lexical + WordNet synonyms": {"wordnet": "installed"},
            "embeddings, 1 sentence per pass": {"embeddings": args.embeddings},
            "embeddings, 32 sentences per pass": {"embeddings": args.embeddings},
            "embeddings, layer 4 (upper layers dropped), 32 per pass": {
                "embeddings": args.embeddings,
                "embedding_layer": 4,
            },
        }
        sources["embeddings, 1 sentence per pass"]["embedding_batch_size"] = 1
        seconds: dict = {name: [] for name in sources}
        for _ in range(args.rounds):  # alternating, each in a fresh one-thread process
            for name, parameters in sources.items():
                aligner = json.dumps({"type": "tft_syntactic", **parameters})
                seconds[name].append(measure(pairs, 1, aligner)[0])
        print("| link source | pairs | seconds (median) | pairs/s per core |\n|---|---|---|---|")
        for name, values in seconds.items():
            median = statistics.median(values)
            print(f"| {name} | {pairs} | {median:.1f} | {pairs / median:.1f} |")
        batched, single = (
            statistics.median(seconds[name])
            for name in ("embeddings, 32 sentences per pass", "embeddings, 1 sentence per pass")
        )
        print(f"\nbatched vs one sentence per pass: {single / batched:.2f}x faster")
    elif args.mode == "speed":
        pairs = args.pairs[0]
        rows = {workers: measure(pairs, workers)[0] for workers in (1, 2)}
        print("| workers | pairs | seconds | pairs/s | pairs/s per worker |\n|---|---|---|---|---|")
        for workers, seconds in rows.items():
            print(
                f"| {workers} | {pairs} | {seconds:.1f} | {pairs / seconds:.1f} "
                f"| {pairs / seconds / workers:.1f} |"
            )
        print(f"\nscaling 2 vs 1 worker: {rows[1] / rows[2]:.2f}x (ideal 2.00x)")
    else:
        peaks = {pairs: measure(pairs, 1)[1] for pairs in args.pairs}
        print("| pairs | peak RSS (MB) |\n|---|---|")
        for pairs, peak in peaks.items():
            print(f"| {pairs} | {peak:.0f} |")
        small, large = min(peaks), max(peaks)
        print(f"\npeak RSS ratio {large} vs {small} pairs: {peaks[large] / peaks[small]:.3f}")


if __name__ == "__main__":
    main()
