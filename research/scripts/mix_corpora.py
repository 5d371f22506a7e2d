"""
Mixes aligned paraphrase corpora (JSON lines written by `allennlp tft-align`) into one corpus for
injection, and reports each source's alignment figures.

    python -m research.scripts.mix_corpora OUT.jsonl twitter=tw.jsonl parasci=ps.jsonl \
        [--take 11000]

Each record keeps its fields and gains `corpus` (the name before `=`). With `--take N`, the first N
records of each source after a seeded shuffle are kept, so that sources of different sizes enter
a comparison at the same size. The mixed corpus is shuffled (seeded) so that the reader's blocks
and the data loader's buffers each hold every source in proportion, rather than one source
after another (the injection reader draws random partners from the same block of lines). The
output is written to a temporary file and renamed into place; an existing output is refused.

`--stats` prints, per source, the figures of the aligned corpus: pairs, phrases per sentence,
alignments per pair, and the share of alignments whose two phrases differ (ignoring case), which
are what the phrasal head learns most from.
"""

import argparse
import json
import os
import random
import sys
from typing import Dict, List, Sequence, Tuple

from tft_allennlp.common.atomic_files import atomic_output


def read_records(path: str) -> List[Dict]:
    with open(path, encoding="utf-8") as corpus:
        return [json.loads(line) for line in corpus if line.strip()]


def is_identical(record: Dict, alignment: Sequence[Sequence[int]]) -> bool:
    """Whether an alignment pairs the same words (ignoring case) on both sides."""
    (source_start, source_end), (target_start, target_end) = alignment
    source = record["source"][source_start : source_end + 1]
    target = record["target"][target_start : target_end + 1]
    return [word.lower() for word in source] == [word.lower() for word in target]


def corpus_figures(records: Sequence[Dict]) -> Dict[str, float]:
    pairs = len(records)
    phrases = sum(len(r["source_phrases"]) + len(r["target_phrases"]) for r in records)
    alignments = sum(len(r["alignments"]) for r in records)
    different = sum(not is_identical(r, a) for r in records for a in r["alignments"])
    return {
        "pairs": pairs,
        "phrases_per_sentence": phrases / (2 * pairs) if pairs else 0.0,
        "alignments_per_pair": alignments / pairs if pairs else 0.0,
        "non_identical_per_pair": different / pairs if pairs else 0.0,
        "non_identical_share": different / alignments if alignments else 0.0,
    }


def mix(sources: Sequence[Tuple[str, List[Dict]]], take: int, seed: int) -> List[Dict]:
    mixed = []
    for name, records in sources:
        if take:
            if len(records) < take:
                raise ValueError(f"source {name} has {len(records)} records, fewer than {take}")
            records = random.Random(f"{seed}-{name}").sample(records, take)
        mixed += [{**record, "corpus": name} for record in records]
    random.Random(seed).shuffle(mixed)
    return mixed


def write_atomically(path: str, records: Sequence[Dict]) -> None:
    with atomic_output(path) as out:
        for record in records:
            out.write(json.dumps(record) + "\n")


def main(argv: Sequence[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", help="mixed corpus to write (JSON lines); '-' with --stats only")
    parser.add_argument("sources", nargs="+", help="NAME=ALIGNED.jsonl, one per source")
    parser.add_argument("--take", type=int, default=0, help="records per source (0: all)")
    parser.add_argument("--seed", type=int, default=13370)
    parser.add_argument("--stats", action="store_true", help="print each source's figures")
    args = parser.parse_args(argv)
    sources = []
    for source in args.sources:
        name, sep, path = source.partition("=")
        if not sep or not name:
            parser.error(f"expected NAME=PATH, got {source!r}")
        sources.append((name, read_records(path)))
    if args.stats:
        for name, records in sources:
            print(name, json.dumps(corpus_figures(records)))
    if args.output == "-":
        return
    if os.path.exists(args.output):
        parser.error(f"{args.output} exists; remove it first")
    mixed = mix(sources, args.take, args.seed)
    write_atomically(args.output, mixed)
    print(f"{args.output}: {len(mixed)} pairs", json.dumps(corpus_figures(mixed)))


if __name__ == "__main__":
    main(sys.argv[1:])
