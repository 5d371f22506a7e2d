"""
Mohebbi & Rajaee's adapter variants against Houlsby's, paired by seed (the table of
`research/results/adapters_cpu/README.md`): `not_shared - houlsby` and `three_shared - houlsby` on
each task and encoder, from the grid's runs.csv. Run from the repository root:

    python -m research.scripts.adapter_variants
"""

from typing import List

from research.scripts import RESULTS
from research.scripts.grid_scores import ScoreKey, Scores, read_scores
from tft_experiments.paired import format_difference, paired_difference

RUNS = RESULTS / "adapters_cpu/experiment/runs.csv"
METRICS = {"mrpc": "accuracy", "stsb": "pearson", "rte": "accuracy", "sst2": "accuracy"}
SEEDS = 3  # fine-tuning seeds
VARIANTS = ("adapters_not_shared", "adapters_three_shared")


def table(scores: Scores, base: str = "minilm", size: str = "1000") -> List[str]:
    """The markdown table's lines: a row per encoder and variant, a column per task."""
    lines = ["| encoder | variant - houlsby | " + " | ".join(METRICS) + " |"]
    lines.append("|---|---|" + "---|" * len(METRICS))
    for variant in ("none", "tft"):
        for strategy in VARIANTS:
            cells = []
            for task, metric in METRICS.items():
                treated = scores.get(ScoreKey(base, variant, strategy, task, metric, size), {})
                control = ScoreKey(base, variant, "adapters_houlsby", task, metric, size)
                difference = paired_difference(treated, scores.get(control, {}))
                cells.append("" if difference is None else format_difference(difference, SEEDS))
            lines.append(f"| {variant} | {strategy} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    print("\n".join(table(read_scores([RUNS]))))


if __name__ == "__main__":
    main()
