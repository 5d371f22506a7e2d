"""
The verdict tables of the paper's claims, from the `runs.csv` of the claims grids (recipe
`tuned` only, dev scores in %). Every cell is a difference over fine-tuning seeds: paired by
seed where the two settings share the seed's subsample (`paired_difference`), Welch's test
where they do not (`unpaired_difference`: a gain at 1k against the gain on the whole training
set).

- H1, injection helps semantic equivalence: `tft` / `tft_simple` (injection seed 1) minus
  `none` on MRPC, STS-B and RTE, at 1k (4-epoch size grid) and on the whole training sets
  (whole-set grid);
- H2, larger gains with less data: the 1k gain minus the whole-set gain;
- H3, the paper's model against the simple one: `tft_simple - tft` at each size, and the noise
  of one injection: a second injection seed minus the first at 1k (size grid), paired by
  fine-tuning seed; a variant difference no larger than that cannot be told from it;
- H4, no help on distant tasks: SST-2 and CoLA at 1k and 5k (distant grid);
- small beats large: MiniLM (each variant) minus all-mpnet-base-v2 without injection at 1k.

Each table is one family of tests: `†` marks a cell whose p-value stays under 0.05 after Holm's
adjustment for all of the table's tests (`holm_adjusted`), `*` one under 0.05 on its own.

H5 (the ablations) is `research/results/claims_ablations_cpu/README.md`. Writes `verdicts.md` (the
tables) and `verdicts.png` (each difference with its 95% interval) in `research/results/claims/`.
Run from the repository root:

    python -m research.scripts.claims_verdicts

`--seeds 2 3` leaves out fine-tuning seed 1, the seed whose dev score of the base chose each
recipe (the sweep), and writes `verdicts_seeds_2_3.md` instead (no plot): a difference that
holds on seeds 2-3 alone does not come from that choice.
"""

import argparse
import math
from typing import Dict, List, Optional, Sequence, Tuple, Union

from research.scripts import RESULTS
from research.scripts.grid_scores import ScoreKey, Scores, read_scores
from tft_experiments.paired import (
    PairedDifference,
    UnpairedDifference,
    format_difference,
    holm_adjusted,
    paired_difference,
    seed_differences,
    unpaired_difference,
)

GRIDS = {
    "size": RESULTS / "claims_size_4ep_cpu/experiment/runs.csv",
    "whole": RESULTS / "claims_whole_cpu/experiment/runs.csv",
    "distant": RESULTS / "claims_distant_cpu/experiment/runs.csv",
}
SIMILAR = [("mrpc", "accuracy"), ("mrpc", "f1"), ("stsb", "pearson"), ("rte", "accuracy")]
DISTANT = [("sst2", "accuracy"), ("cola", "mcc")]
INJECTED = ("tft", "tft_simple")
LEVEL = 0.05
SEEDS = (1, 2, 3)  # fine-tuning seeds of every grid
OUTPUT = RESULTS / "claims"
HEADER = (
    "Written by `python -m research.scripts.claims_verdicts` from the claims grids' `runs.csv`."
    " Dev scores"
    " (%), differences over fine-tuning {seeds}: mean ± std of the per-seed differences (paired"
    " t-test; [n=k]: k seeds only) or the difference of means with its 95% interval (Welch; n:"
    " seeds on each side); * p < 0.05; † p < 0.05 after Holm's adjustment for all tests of its"
    " table.\n"
)

Difference = Union[PairedDifference, UnpairedDifference]


def cell(difference: Optional[Difference], seeds: int, adjusted: float) -> str:
    """
    Paired: as `results.md` writes it (`format_difference`: `+1.2 ± 0.8 (p 0.12)`, `[n=k]` for
    fewer than `seeds` seeds); Welch: `+1.2 [-0.4, +2.8] (p 0.12, n 3/3)`; then ` †` when the
    Holm-`adjusted` p-value is under the level.
    """
    if difference is None:
        return ""
    if isinstance(difference, PairedDifference):
        text = format_difference(difference, seeds, LEVEL)
    else:
        sizes = f"n {difference.n_first}/{difference.n_second}"
        if min(difference.n_first, difference.n_second) < 2:
            return f"{difference.mean:+.1f} [{sizes}]"
        star = " *" if difference.p_value < LEVEL else ""
        interval = f"[{difference.low:+.1f}, {difference.high:+.1f}]"
        text = f"{difference.mean:+.1f} {interval} (p {difference.p_value:.2f}, {sizes}){star}"
    return text + (" †" if adjusted < LEVEL else "")


Setting = Tuple[str, str]  # (base, variant)
Columns = List[Tuple[str, str]]
Rows = List[Tuple[str, List[Optional[Difference]]]]
Sections = List[Tuple[str, Columns, Rows]]


def score(scores: Scores, setting: Setting, task: str, metric: str, size: str) -> Dict[int, float]:
    """Fine-tuning seed -> dev score (%) of the cross-encoder `setting` (base, variant)."""
    return scores.get(ScoreKey(*setting, "cross", task, metric, size), {})


def paired_rows(
    scores: Scores, columns: Columns, comparisons: List[Tuple[Setting, Setting, str]]
) -> Rows:
    """A row per (treated, control, train size): their paired difference in each column."""
    rows = []
    for treated, control, size in comparisons:
        cells = [
            paired_difference(
                score(scores, treated, t, m, size), score(scores, control, t, m, size)
            )
            for t, m in columns
        ]
        rows.append((f"{' '.join(treated)} - {' '.join(control)}, n {size}", cells))
    return rows


def gain_rows(scores: Scores, columns: Columns, treated: List[Setting], control: Setting) -> Rows:
    """
    A row per setting of `treated`: its gain over `control` at 1k minus its gain on the whole
    training set, each gain a set of per-seed paired differences (Welch's test between them).
    """
    rows = []
    for setting in treated:
        cells: List[Optional[Difference]] = []
        for t, m in columns:
            small, whole = (
                seed_differences(
                    score(scores, setting, t, m, size), score(scores, control, t, m, size)
                )
                for size in ("1000", "all")
            )
            cells.append(unpaired_difference(list(small.values()), list(whole.values())))
        rows.append((f"{setting[1]}: gain at n 1000 - gain at n all", cells))
    return rows


def markdown(sections: Sections, seeds: int) -> str:
    """A table per section; its tests are one family for Holm's adjustment."""
    lines = []
    for title, columns, rows in sections:
        nan = float("nan")
        p_values = [d.p_value if d is not None else nan for _, cells in rows for d in cells]
        adjusted = iter(holm_adjusted(p_values))
        tests = sum(not math.isnan(p) for p in p_values)
        lines += ["", f"### {title} ({tests} tests)", ""]
        lines.append("| comparison | " + " | ".join(f"{t.upper()} {m}" for t, m in columns) + " |")
        lines.append("|---|" + "---|" * len(columns))
        for name, cells in rows:
            texts = [cell(d, seeds, next(adjusted)) for d in cells]
            lines.append(f"| {name} | " + " | ".join(texts) + " |")
    return "\n".join(lines) + "\n"


def forest(sections: Sections, path: str) -> None:
    """One panel per section: each difference with its 95% interval, a line at 0."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    heights = [max(1, len(columns) * len(rows)) for _, columns, rows in sections]
    figure, axes = plt.subplots(
        len(sections),
        1,
        figsize=(8, 1.2 + 0.22 * sum(heights)),
        gridspec_kw={"height_ratios": heights},
    )
    for axis, (title, columns, rows) in zip(axes, sections):
        labels, y = [], 0
        for name, cells in rows:
            for (task, metric), difference in zip(columns, cells):
                if difference is not None:
                    if not math.isnan(difference.low):  # an interval: two seeds or more
                        axis.plot([difference.low, difference.high], [y, y], color="tab:blue")
                    axis.plot([difference.mean], [y], "o", color="tab:blue", markersize=4)
                labels.append(f"{name}: {task.upper()} {metric}")
                y += 1
        axis.axvline(0, color="grey", linewidth=0.8)
        axis.set_yticks(range(len(labels)), labels, fontsize=6)
        axis.invert_yaxis()
        axis.set_title(title, fontsize=8)
        axis.tick_params(axis="x", labelsize=7)
    axes[-1].set_xlabel("difference in dev score (points), 95% interval")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def verdict_sections(seeds: Sequence[int] = SEEDS) -> Sections:
    """Every verdict table's title, columns and rows, from the grids' fine-tuning `seeds`."""
    scores = read_scores(list(GRIDS.values()), seeds=seeds)
    none, mpnet = ("minilm", "none"), ("mpnet", "none")
    injected = [("minilm", variant) for variant in INJECTED]
    simple, full = injected[1], injected[0]
    similar_sizes, distant_sizes = ("1000", "all"), ("1000", "5000")
    h1 = [(variant, none, size) for size in similar_sizes for variant in injected]
    h2 = gain_rows(scores, SIMILAR, injected, none)
    h3 = [(simple, full, size) for size in similar_sizes]
    noise = [(("minilm", f"{v}_iseed2"), ("minilm", v), "1000") for v in INJECTED]
    h3_distant = [(simple, full, size) for size in distant_sizes]
    h4 = [(variant, none, size) for size in distant_sizes for variant in injected]
    large = [(small, mpnet, "1000") for small in (none, *injected)]
    return [
        ("H1: injection against none (paired by seed)", SIMILAR, paired_rows(scores, SIMILAR, h1)),
        ("H2: gains with less data (Welch, 95% interval)", SIMILAR, h2),
        ("H3: the simple model against the paper's", SIMILAR, paired_rows(scores, SIMILAR, h3)),
        ("H3: a second injection seed (1k)", SIMILAR, paired_rows(scores, SIMILAR, noise)),
        ("H3 on the distant tasks", DISTANT, paired_rows(scores, DISTANT, h3_distant)),
        ("H4: distant tasks (paired by seed)", DISTANT, paired_rows(scores, DISTANT, h4)),
        (
            "Small beats large: all-MiniLM-L6-v2 (22M) against all-mpnet-base-v2 (110M)",
            SIMILAR,
            paired_rows(scores, SIMILAR, large),
        ),
    ]


def file_header(
    prefix: str, header: str, seeds: Sequence[int], all_seeds: Sequence[int], described: str
) -> Tuple[str, str]:
    """
    The name of the verdicts file `prefix` over fine-tuning `seeds` of the grids' `all_seeds`,
    and its `header` with `{seeds}` naming them: `described` for all of them (`PREFIX.md`), or
    e.g. "seeds 2-10 only" (`PREFIX_seeds_2-10.md`; seeds 2 and 3: `PREFIX_seeds_2_3.md`).
    """
    if sorted(seeds) == sorted(all_seeds):
        return f"{prefix}.md", header.format(seeds=described)
    named = seeds_named(seeds)
    return f"{prefix}_{named.replace(', ', '_').replace(' ', '_')}.md", header.format(
        seeds=f"{named} only"
    )


def seeds_named(seeds: Sequence[int]) -> str:
    """ "seeds 2-10", or "seeds 2, 5" where they are not a run of three or more in a row."""
    ordered = sorted(seeds)
    if len(ordered) > 2 and ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"seeds {ordered[0]}-{ordered[-1]}"
    return f"seeds {', '.join(map(str, ordered))}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    seeds = parser.parse_args().seeds
    sections = verdict_sections(seeds)
    tables = markdown(sections, len(seeds))
    print(tables)
    name, header = file_header("verdicts", HEADER, seeds, SEEDS, "seeds 1-3")
    (OUTPUT / name).write_text(header + tables)
    if seeds == list(SEEDS):
        forest(sections, str(OUTPUT / "verdicts.png"))


if __name__ == "__main__":
    main()
