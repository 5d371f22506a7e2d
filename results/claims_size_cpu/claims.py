"""
The README's tables of the size grid that `results.md` does not hold, from the grid's runs.csv.
The unit of every test is the fine-tuning seed (it fixes the 1k subsample and the fine-tuning's
randomness): a MiniLM variant's score for a seed is the mean over its two injections (injection
seeds 1 and 2, `tft` and `tft_iseed2`), paired with the other setting's score for that seed.

1. `tft_simple - tft` (the simple model against the paper's full one);
2. each injected variant `- none`, and the spread injection seeds add: injection seed 2 minus
   seed 1, paired by fine-tuning seed, beside the fine-tuning seeds' own standard deviation; a
   variant difference no larger than the injection seeds' cannot be told from one injection's
   noise, whatever its p-value over fine-tuning seeds;
3. each MiniLM variant `-` all-mpnet-base-v2 without injection.

Run from the repository root, for this grid or the one at 4 epochs:

    python results/claims_size_cpu/claims.py
    python results/claims_size_cpu/claims.py results/claims_size_4ep_cpu/experiment/runs.csv
"""

import csv
import statistics
import sys
from collections import defaultdict
from typing import Dict, List, Optional, Tuple

from tft_allennlp.experiments.paired import PairedDifference, format_difference, paired_difference

RUNS = "results/claims_size_cpu/experiment/runs.csv"
METRICS = [("mrpc", "accuracy"), ("mrpc", "f1"), ("stsb", "pearson"), ("rte", "accuracy")]
FAMILIES = ("tft", "tft_simple")
SEED2 = "_iseed2"
SEEDS = 3  # fine-tuning seeds


Scores = Dict[Tuple[str, str, str, str], Dict[int, float]]


def cell(difference: Optional[PairedDifference]) -> str:
    return "" if difference is None else format_difference(difference, SEEDS)


def load(runs: str) -> Scores:
    """(base, variant, task, metric) -> fine-tuning seed -> score (%), recipe `tuned`."""
    scores: Scores = defaultdict(dict)
    with open(runs) as handle:
        for row in csv.DictReader(handle):
            if row["recipe"] == "tuned" and (row["task"], row["metric"]) in METRICS:
                key = (row["base"], row["variant"], row["task"], row["metric"])
                scores[key][int(row["seed"])] = 100 * float(row["value"])
    return scores


def both_injections(scores: Scores, family: str, task: str, metric: str) -> Dict[int, float]:
    """Fine-tuning seed -> a MiniLM variant's mean score over its two injections."""
    first = scores[("minilm", family, task, metric)]
    second = scores[("minilm", f"{family}{SEED2}", task, metric)]
    return {seed: (first[seed] + second[seed]) / 2 for seed in first if seed in second}


def table(title: str, rows: List[Tuple[str, List[str]]]) -> None:
    print(f"\n{title}\n")
    print("| comparison | " + " | ".join(f"{t.upper()} {m}" for t, m in METRICS) + " |")
    print("|---|" + "---|" * len(METRICS))
    for name, cells in rows:
        print(f"| {name} | " + " | ".join(cells) + " |")


def main() -> None:
    scores = load(sys.argv[1] if len(sys.argv) > 1 else RUNS)
    mean = {f: {tm: both_injections(scores, f, *tm) for tm in METRICS} for f in FAMILIES}
    simple = [cell(paired_difference(mean["tft_simple"][tm], mean["tft"][tm])) for tm in METRICS]
    rows = [("tft_simple - tft (each: mean of 2 injections)", simple)]
    for family in FAMILIES:
        cells = []
        for tm in METRICS:
            none = scores[("minilm", "none", *tm)]
            cells.append(cell(paired_difference(mean[family][tm], none)))
        rows.append((f"{family} (mean of 2 injections) - none", cells))
    for family in FAMILIES:
        cells = []
        for tm in METRICS:
            first = scores[("minilm", family, *tm)]
            second = scores[("minilm", f"{family}{SEED2}", *tm)]
            within = [statistics.stdev(v.values()) for v in (first, second) if len(v) > 1]
            seeds = f"; seeds' std {statistics.mean(within):.1f}" if within else ""
            cells.append(cell(paired_difference(second, first)) + seeds)
        rows.append((f"{family}: injection seed 2 - seed 1", cells))
    table("MiniLM variants against each other and against none; injection seeds", rows)
    rows = []
    for family in ("none", *FAMILIES):
        cells = []
        for tm in METRICS:
            large = scores[("mpnet", "none", *tm)]
            small = scores[("minilm", "none", *tm)] if family == "none" else mean[family][tm]
            cells.append(cell(paired_difference(small, large)))
        rows.append((f"MiniLM {family} - MPNet none", cells))
    table("The small model against the 5x larger one", rows)


if __name__ == "__main__":
    main()
