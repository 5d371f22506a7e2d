"""
Issue 73's tuned verdict: the injection's gain and "small against large" when every variant's
learning rate is tuned on its own (research/specs/tuned_cpu.jsonnet: 12 learning rates on a
fifth of fine-tuning seed 1's subsample held out of training, then seeds 1-10 on dev), next to
the same comparisons at the fixed rate of the multi-source grids (the rate the sweep of MiniLM
without injection picked on dev, applied to every variant; `multisource_verdicts`).

The two sides differ in one more way: the tuned grid trains in float32, the fixed-rate grids in
bfloat16 on a CPU that has it (their configs, claims_multisource.libsonnet). Each table is one
family for Holm's adjustment (`claims_verdicts`). Writes
`research/results/claims/verdicts_tuned.md`:

    python -m research.scripts.tuned_verdicts
"""

import argparse
from typing import List, Sequence, Tuple

from research.scripts import RESULTS
from research.scripts.claims_verdicts import (
    OUTPUT,
    SIMILAR,
    Sections,
    Setting,
    file_header,
    markdown,
    paired_rows,
)
from research.scripts.grid_scores import read_scores
from research.scripts.multisource_verdicts import GRIDS as FIXED_GRIDS

TUNED = "tuned_cpu"
GRIDS = {TUNED: RESULTS / TUNED / "experiment/runs.csv", **FIXED_GRIDS}
SEEDS = tuple(range(1, 11))
NONE: Setting = ("minilm", "none")
INJECTED: List[Setting] = [("minilm", "tft"), ("minilm", "tft_multi")]
MPNET: Setting = ("mpnet", "none")
HEADER = (
    "Written by `python -m research.scripts.tuned_verdicts` from the grids' `runs.csv`."
    " Dev scores (%) at 1k, differences over fine-tuning {seeds}: mean ± std of the per-seed"
    " differences (paired t-test; [n=k]: k seeds only); * p < 0.05; † p < 0.05 after Holm's"
    " adjustment for all tests of its table. Tuned: each variant at its own learning rate, chosen"
    " among 12 on held-out training data (tuned_cpu, float32). Fixed: every variant at the rate"
    " the sweep of `none` picked on dev (the multi-source grids, bfloat16).\n"
)


def sections(tuned: Sequence, fixed: Sequence, seeds: Sequence[int]) -> Sections:
    """The injection against none and the small models against the large one, tuned and fixed."""
    result = []
    for side, paths in (("tuned", tuned), ("fixed rate", fixed)):
        scores = read_scores(paths, seeds=seeds)

        def rows(comparisons: List[Tuple[Setting, Setting]]):
            return paired_rows(scores, SIMILAR, [(a, b, "1000") for a, b in comparisons])

        result += [
            (f"Injection against none, {side}", SIMILAR, rows([(v, NONE) for v in INJECTED])),
            (
                f"Small against large, {side}: all-MiniLM-L6-v2 (22M) against all-mpnet-base-v2"
                " (110M)",
                SIMILAR,
                rows([(small, MPNET) for small in (NONE, *INJECTED)]),
            ),
        ]
    return result


def verdicts(seeds: Sequence[int] = SEEDS) -> Tuple[str, str]:
    """The file's name and text over fine-tuning `seeds` (of 1-10)."""
    present = {name: path for name, path in GRIDS.items() if path.exists()}
    missing = [name for name in GRIDS if name not in present]
    tuned = [present[TUNED]] if TUNED in present else []
    fixed = [path for name, path in present.items() if name != TUNED]
    name, header = file_header("verdicts_tuned", HEADER, seeds, SEEDS, "seeds (1-10)")
    if missing:
        header += f"\nNot written yet (their tables are empty): {', '.join(missing)}.\n"
    return name, header + markdown(sections(tuned, fixed, seeds), len(seeds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    name, text = verdicts(tuple(parser.parse_args().seeds))
    print(text)
    (OUTPUT / name).write_text(text)


if __name__ == "__main__":
    main()
