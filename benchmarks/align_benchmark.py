"""
Aligner throughput and memory (issue: phrase alignment, "Speed and scale").

    python benchmarks/align_benchmark.py speed --pairs 2000            # pairs/s at 1 and 2 workers
    python benchmarks/align_benchmark.py memory --pairs 2000 20000     # peak RSS per input size
    python benchmarks/align_benchmark.py links --pairs 500 --embeddings MODEL_DIR
        # pairs/s per core of each link source: lexical, and contextual embeddings with one
        # sentence per forward pass (as before issue 19) and a batch of 32, reading the last
        # layer or layer 4 (the layers above it dropped)
    python benchmarks/align_benchmark.py aligners --pairs 2000 \
        --input ../shared/data/paraphrase/quora_duplicates.tsv
        # pairs/s per core of each registered aligner on the first 2000 pairs of the input
        # (parse and alignment, batches of 64, after a warm-up batch), side by side

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
from typing import Optional

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


# The registered aligners side by side (`aligners` mode), as `tft-align --aligner` names them.
ALIGNERS = {
    "tft_learned (default), lexical scorer": {"type": "tft_learned"},
    "tft_learned, contextual scorer (MiniLM layer 3)": {
        "type": "tft_learned",
        "scorer": "contextual",
    },
    "tft_syntactic": {"type": "tft_syntactic"},
    "tft_syntactic + MiniLM similarity": {"type": "tft_syntactic", "embeddings": "installed"},
    "tft_syntactic_basic": {"type": "tft_syntactic_basic"},
    "tft_mutual_argmax (MiniLM layer 3)": {"type": "tft_mutual_argmax"},
}


def run_pairs(input_path: str, pairs: int, aligner: str) -> None:
    """Parses and aligns the first `pairs` pairs of `input_path` in this process, in batches of
    64 after one warm-up batch; prints wall and CPU seconds."""
    from tft_allennlp.alignment.pair_input import read_sentence_pairs
    from tft_allennlp.alignment.pipeline import build_pipeline
    from tft_allennlp.alignment.word_embedder import checkpoint_directory
    from tft_allennlp.common.input_problems import InputProblems

    parameters = json.loads(aligner)
    if parameters.get("embeddings") == "installed":
        parameters["embeddings"] = checkpoint_directory("installed")
    pipeline = build_pipeline("en_core_web_sm", parameters)
    rows = list(read_sentence_pairs(input_path, InputProblems(input_path)))
    pipeline.align_texts(rows[-64:])  # warm-up: caches, first forward pass
    rows = rows[:pairs]
    assert len(rows) == pairs, f"{input_path} has only {len(rows)} pairs"
    started, cpu_started = time.perf_counter(), time.process_time()
    for start in range(0, pairs, 64):
        pipeline.align_texts(rows[start : start + 64])
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    print(f"RESULT {pairs} 1 {seconds:.2f} {cpu:.2f}")


def measure_pairs(input_path: str, pairs: int, aligner: str):
    """(wall seconds, CPU seconds) of `run_pairs` in a fresh one-thread process."""
    command = [sys.executable, __file__, "pairs", "--pairs", str(pairs), "--input", input_path]
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    result = subprocess.run(
        command + ["--aligner", aligner],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
    )
    line = [text for text in result.stdout.splitlines() if text.startswith("RESULT")][-1].split()
    return float(line[3]), float(line[4])


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


def compare_aligners(input_path: Optional[str], pairs: int, rounds: int) -> None:
    """Each registered aligner on the same pairs, alternating, each run in a fresh one-thread
    process: medians of wall and CPU seconds; pairs/s per core is pairs over CPU seconds (one
    core fully used), which other load on the machine changes less than wall time."""
    with tempfile.TemporaryDirectory() as directory:
        if input_path is None:
            input_path = os.path.join(directory, "pairs.tsv")
            write_input(input_path, pairs + 64)
        times: dict = {name: [] for name in ALIGNERS}
        for _ in range(rounds):
            for name, parameters in ALIGNERS.items():
                times[name].append(measure_pairs(input_path, pairs, json.dumps(parameters)))
    print(
        "| aligner | pairs | wall s (median) | CPU s (median) | pairs/s per core | vs "
        "tft_syntactic |\n|---|---|---|---|---|---|"
    )
    cpu = {name: statistics.median(c for _, c in values) for name, values in times.items()}
    for name, values in times.items():
        wall = statistics.median(w for w, _ in values)
        print(
            f"| {name} | {pairs} | {wall:.1f} | {cpu[name]:.1f} | {pairs / cpu[name]:.1f} "
            f"| {cpu['tft_syntactic'] / cpu[name]:.2f}x |"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["speed", "memory", "links", "aligners", "one", "pairs"])
    parser.add_argument("--input", help="aligners: sentence pairs (default: synthetic)")
    parser.add_argument("--pairs", type=int, nargs="+", default=[2000])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--aligner", default="{}", help="PhraseAligner parameters (JSON)")
    parser.add_argument("--embeddings", help="links: a local Hugging Face checkpoint")
    parser.add_argument("--rounds", type=int, default=2, help="links: alternating rounds")
    args = parser.parse_args()
    if args.mode == "one":
        run_one(args.pairs[0], args.workers, args.aligner)
    elif args.mode == "pairs":
        run_pairs(args.input, args.pairs[0], args.aligner)
    elif args.mode == "aligners":
        compare_aligners(args.input, args.pairs[0], args.rounds)
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
