"""
Issue 18's verdict tables, from the `runs.csv` of the claims grids (recipe `tuned` only, dev
scores in %). Every cell is a difference over fine-tuning seeds: paired by seed where the two
settings share the seed's subsample (`paired_difference`), Welch's test where they do not
(`unpaired_difference`: a gain at 1k against the gain on the whole training set).

- H1, injection helps semantic equivalence: `tft` / `tft_simple` (injection seed 1) minus
  `none` on MRPC, STS-B and RTE, at 1k (4-epoch size grid) and on the whole training sets
  (whole-set grid);
- H2, larger gains with less data: the 1k gain minus the whole-set gain;
- H3, the paper's model against the simple one: `tft_simple - tft` at each size;
- H4, no help on distant tasks: SST-2 and CoLA at 1k and 5k (distant grid);
- small beats large: MiniLM (each variant) minus all-mpnet-base-v2 without injection at 1k.

H5 (the ablations) is `results/claims_ablations_cpu/README.md`; the spread that a second
injection seed adds is `results/claims_size_cpu/claims.py`. A grid that has not run yet (no
`runs.csv`) leaves its cells empty. Run from the repository root:

    python results/claims/verdicts.py
"""

import csv
import os
from collections import defaultdict
from typing import Dict, List, Optional, Sequence, Tuple

from tft_allennlp.experiments.paired import (
    PairedDifference,
    UnpairedDifference,
    paired_difference,
    unpaired_difference,
)

GRIDS = {
    "size": "results/claims_size_4ep_cpu/experiment/runs.csv",
    "whole": "results/claims_whole_cpu/experiment/runs.csv",
    "distant": "results/claims_distant_cpu/experiment/runs.csv",
}
SIMILAR = [("mrpc", "accuracy"), ("mrpc", "f1"), ("stsb", "pearson"), ("rte", "accuracy")]
DISTANT = [("sst2", "accuracy"), ("cola", "mcc")]
INJECTED = ("tft", "tft_simple")
LEVEL = 0.05

# (base, variant, task, metric, train size) -> fine-tuning seed -> dev score (%)
Scores = Dict[Tuple[str, str, str, str, str], Dict[int, float]]


def load(paths: Sequence[str]) -> Scores:
    scores: Scores = defaultdict(dict)
    for path in paths:
        if not os.path.exists(path):
            continue
        with open(path) as handle:
            for row in csv.DictReader(handle):
                if row["recipe"] != "tuned" or row["strategy"] != "cross":
                    continue
                key = (row["base"], row["variant"], row["task"], row["metric"], row["train_size"])
                seed, value = int(row["seed"]), 100 * float(row["value"])
                if scores[key].get(seed, value) != value:
                    raise ValueError(f"{path}: {key} seed {seed} differs from another grid's")
                scores[key][seed] = value
    return scores


def gains(scores: Scores, base: str, variant: str, control: Tuple[str, str], key) -> Dict:
    """Seed -> (base, variant) minus the `control` (base, variant), same task, metric, size."""
    treated, reference = scores[(base, variant, *key)], scores[(*control, *key)]
    return {seed: treated[seed] - reference[seed] for seed in treated if seed in reference}


def cell(difference: Optional[PairedDifference]) -> str:
    if difference is None:
        return ""
    if difference.n < 2:
        return f"{difference.mean:+.1f} [n=1]"
    star = " *" if difference.p_value < LEVEL else ""
    return (
        f"{difference.mean:+.1f} ± {difference.std:.1f} "
        f"(p {difference.p_value:.2f}, n {difference.n}){star}"
    )


def welch_cell(difference: Optional[UnpairedDifference]) -> str:
    if difference is None:
        return ""
    sizes = f"n {difference.n_first}/{difference.n_second}"
    if difference.n_first < 2 or difference.n_second < 2:
        return f"{difference.mean:+.1f} [{sizes}]"
    star = " *" if difference.p_value < LEVEL else ""
    return (
        f"{difference.mean:+.1f} [{difference.low:+.1f}, {difference.high:+.1f}] "
        f"(p {difference.p_value:.2f}, {sizes}){star}"
    )


def table(title: str, columns: List[Tuple[str, str]], rows: List[Tuple[str, List[str]]]) -> None:
    print(f"\n### {title}\n")
    print("| comparison | " + " | ".join(f"{t.upper()} {m}" for t, m in columns) + " |")
    print("|---|" + "---|" * len(columns))
    for name, cells in rows:
        print(f"| {name} | " + " | ".join(cells) + " |")


Setting = Tuple[str, str]  # (base, variant)


def paired_rows(
    scores: Scores, columns: List[Tuple[str, str]], comparisons: List[Tuple[Setting, Setting, str]]
) -> List[Tuple[str, List[str]]]:
    """A row per (treated, control, train size): their paired difference in each column."""
    rows = []
    for treated, control, size in comparisons:
        cells = [
            cell(paired_difference(scores[(*treated, t, m, size)], scores[(*control, t, m, size)]))
            for t, m in columns
        ]
        name = f"{' '.join(treated)} - {' '.join(control)}, n {size}"
        rows.append((name, cells))
    return rows


def main() -> None:
    scores = load(list(GRIDS.values()))
    none, mpnet = ("minilm", "none"), ("mpnet", "none")
    injected = [("minilm", variant) for variant in INJECTED]
    simple, full = injected[1], injected[0]
    similar_sizes, distant_sizes = ("1000", "all"), ("1000", "5000")
    h1 = [(variant, none, size) for size in similar_sizes for variant in injected]
    table("H1: injection against none (paired by seed)", SIMILAR, paired_rows(scores, SIMILAR, h1))
    rows = []
    for base, variant in injected:
        cells = []
        for t, m in SIMILAR:
            small = gains(scores, base, variant, none, (t, m, "1000"))
            whole = gains(scores, base, variant, none, (t, m, "all"))
            cells.append(
                welch_cell(unpaired_difference(list(small.values()), list(whole.values())))
            )
        rows.append((f"{variant}: gain at n 1000 - gain at n all", cells))
    table("H2: gains with less data (Welch, 95% interval)", SIMILAR, rows)
    h3 = [(simple, full, size) for size in similar_sizes]
    table("H3: the simple model against the paper's", SIMILAR, paired_rows(scores, SIMILAR, h3))
    h3 = [(simple, full, size) for size in distant_sizes]
    table("H3 on the distant tasks", DISTANT, paired_rows(scores, DISTANT, h3))
    h4 = [(variant, none, size) for size in distant_sizes for variant in injected]
    table("H4: distant tasks (paired by seed)", DISTANT, paired_rows(scores, DISTANT, h4))
    large = [(small, mpnet, "1000") for small in (none, *injected)]
    title = "Small beats large: all-MiniLM-L6-v2 (22M) against all-mpnet-base-v2 (110M)"
    table(title, SIMILAR, paired_rows(scores, SIMILAR, large))


if __name__ == "__main__":
    main()
