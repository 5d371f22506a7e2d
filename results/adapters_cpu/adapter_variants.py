"""
Mohebbi & Rajaee's variants against Houlsby's adapters, paired by seed (the README's table):
`not_shared - houlsby` and `three_shared - houlsby` on each task and encoder, from the grid's
runs.csv. Run from the repository root:

    python results/adapters_cpu/adapter_variants.py
"""

import csv
from collections import defaultdict

from tft_allennlp.experiments.paired import paired_difference

RUNS = "results/adapters_cpu/experiment/runs.csv"
METRICS = {"mrpc": "accuracy", "stsb": "pearson", "rte": "accuracy", "sst2": "accuracy"}


def main() -> None:
    scores = defaultdict(dict)  # (variant, strategy, task) -> seed -> score
    with open(RUNS) as handle:
        for row in csv.DictReader(handle):
            if row["recipe"] == "tuned" and row["metric"] == METRICS[row["task"]]:
                key = (row["variant"], row["strategy"], row["task"])
                scores[key][int(row["seed"])] = 100 * float(row["value"])
    print("| encoder | variant - houlsby | " + " | ".join(METRICS) + " |")
    print("|---|---|" + "---|" * len(METRICS))
    for variant in ("none", "tft"):
        for strategy in ("adapters_not_shared", "adapters_three_shared"):
            cells = []
            for task in METRICS:
                treated = scores[(variant, strategy, task)]
                control = scores[(variant, "adapters_houlsby", task)]
                difference = paired_difference(treated, control)
                mean, std, p = difference.mean, difference.std, difference.p_value
                star = " *" if p < 0.05 else ""
                cells.append(f"{mean:+.1f} ± {std:.1f} (p {p:.2f}){star}")
            print(f"| {variant} | {strategy} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
