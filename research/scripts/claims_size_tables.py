"""
The tables of the size grids' READMEs that `results.md` does not hold, from a grid's runs.csv
(`research/results/claims_size_cpu/`, 2 fine-tuning epochs, or
`research/results/claims_size_4ep_cpu/`, 4). The unit of every test is the fine-tuning seed (it
fixes the 1k subsample and the fine-tuning's randomness): a MiniLM variant's score for a seed is the
mean over its two injections (injection seeds 1 and 2, `tft` and `tft_iseed2`), paired with the
other setting's score for that seed.

1. `tft_simple - tft` (the simple model against the paper's full one);
2. each injected variant `- none`, and the spread injection seeds add: injection seed 2 minus
   seed 1, paired by fine-tuning seed, beside the fine-tuning seeds' own standard deviation; a
   variant difference no larger than the injection seeds' cannot be told from one injection's
   noise, whatever its p-value over fine-tuning seeds;
3. each MiniLM variant `-` all-mpnet-base-v2 without injection.

Run from the repository root, for the 2-epoch grid or the one at 4 epochs:

    python -m research.scripts.claims_size_tables
    python -m research.scripts.claims_size_tables \
        research/results/claims_size_4ep_cpu/experiment/runs.csv
"""

import statistics
import sys
from typing import Dict, List, Optional, Tuple

from research.scripts import RESULTS
from research.scripts.grid_scores import ScoreKey, Scores, read_scores
from tft_experiments.paired import PairedDifference, format_difference, paired_difference

RUNS = RESULTS / "claims_size_cpu/experiment/runs.csv"
METRICS = [("mrpc", "accuracy"), ("mrpc", "f1"), ("stsb", "pearson"), ("rte", "accuracy")]
FAMILIES = ("tft", "tft_simple")
SEED2 = "_iseed2"
SEEDS = 3  # fine-tuning seeds
SIZE = "1000"  # the grids' one training size

Table = Tuple[str, List[Tuple[str, List[str]]]]


def cell(difference: Optional[PairedDifference]) -> str:
    return "" if difference is None else format_difference(difference, SEEDS)


def score(scores: Scores, base: str, variant: str, task: str, metric: str) -> Dict[int, float]:
    """Fine-tuning seed -> dev score (%) of a cross-encoder of the grid."""
    return scores.get(ScoreKey(base, variant, "cross", task, metric, SIZE), {})


def both_injections(scores: Scores, family: str, task: str, metric: str) -> Dict[int, float]:
    """Fine-tuning seed -> a MiniLM variant's mean score over its two injections."""
    first = score(scores, "minilm", family, task, metric)
    second = score(scores, "minilm", f"{family}{SEED2}", task, metric)
    return {seed: (first[seed] + second[seed]) / 2 for seed in first if seed in second}


def tables(scores: Scores) -> List[Table]:
    """The two tables: title, and a row of cells (one per metric of `METRICS`) per comparison."""
    mean = {f: {tm: both_injections(scores, f, *tm) for tm in METRICS} for f in FAMILIES}
    simple = [cell(paired_difference(mean["tft_simple"][tm], mean["tft"][tm])) for tm in METRICS]
    rows = [("tft_simple - tft (each: mean of 2 injections)", simple)]
    for family in FAMILIES:
        cells = []
        for tm in METRICS:
            none = score(scores, "minilm", "none", *tm)
            cells.append(cell(paired_difference(mean[family][tm], none)))
        rows.append((f"{family} (mean of 2 injections) - none", cells))
    for family in FAMILIES:
        cells = []
        for tm in METRICS:
            first = score(scores, "minilm", family, *tm)
            second = score(scores, "minilm", f"{family}{SEED2}", *tm)
            within = [statistics.stdev(v.values()) for v in (first, second) if len(v) > 1]
            seeds = f"; seeds' std {statistics.mean(within):.1f}" if within else ""
            cells.append(cell(paired_difference(second, first)) + seeds)
        rows.append((f"{family}: injection seed 2 - seed 1", cells))
    large_rows = []
    for family in ("none", *FAMILIES):
        cells = []
        for tm in METRICS:
            large = score(scores, "mpnet", "none", *tm)
            if family == "none":
                small = score(scores, "minilm", "none", *tm)
            else:
                small = mean[family][tm]
            cells.append(cell(paired_difference(small, large)))
        large_rows.append((f"MiniLM {family} - MPNet none", cells))
    return [
        ("MiniLM variants against each other and against none; injection seeds", rows),
        ("The small model against the 5x larger one", large_rows),
    ]


def markdown(table: Table) -> str:
    title, rows = table
    lines = ["", title, ""]
    lines.append("| comparison | " + " | ".join(f"{t.upper()} {m}" for t, m in METRICS) + " |")
    lines.append("|---|" + "---|" * len(METRICS))
    lines += [f"| {name} | " + " | ".join(cells) + " |" for name, cells in rows]
    return "\n".join(lines)


def main() -> None:
    scores = read_scores([sys.argv[1] if len(sys.argv) > 1 else RUNS])
    for table in tables(scores):
        print(markdown(table))


if __name__ == "__main__":
    main()
