"""
The claims' verdicts with the multi-source injections beside the Quora-only ones, from the
multi-source grids' `runs.csv` (recipe `tuned`, dev scores in %): fine-tuning seeds 1-10 at
1k, 1-3 on the whole training sets. Every fine-tuning of these grids ran with one trainer
(fused AdamW, sorted batches, bfloat16), `none` and the Quora-only `tft` / `tft_simple`
included, so that every row pairs runs of one recipe; `results/claims/verdicts.md` keeps the
claims grids' earlier verdicts (seeds 1-3, the trainer before).

Each table is one family for Holm's adjustment (`claims_verdicts`):
- H1 at 1k and on the whole sets: each injection minus `none`;
- more, more varied paraphrases: each multi-source injection minus its Quora-only one;
- H2: the gain at 1k minus the gain on the whole set (Welch);
- H3: `tft_simple_multi - tft_multi`; H4: SST-2 and CoLA at 1k;
- size against domain: the 11k single-source injections and `tft_multi` minus `none`, and
  each single-source one minus `tft_multi` (MRPC, STS-B at 1k);
- the aligners: `tft_multi_learned` minus `tft_multi` and minus `none`;
- small against large: MiniLM `none`, `tft_multi`, `tft_simple_multi` minus all-mpnet-base-v2
  `none` at 1k.

The whole-set tables leave out `tft_simple_multi`, whose cells were cut for CPU time (`CUT`, in
the file's header). A grid that has not written its `runs.csv` yet is named in the file's header
and its tables stay empty. Writes `results/claims/verdicts_multisource.md` and
`verdicts_multisource.png`:

    python -m scripts.multisource_verdicts

`--seeds 2 3 4 5 6 7 8 9 10` leaves out fine-tuning seed 1, on which the sweep of `none` chose
each task's recipe, and writes `verdicts_multisource_seeds_2-10.md` (no plot).
"""

import argparse
from typing import List, Sequence, Tuple

from scripts import RESULTS
from scripts.claims_verdicts import (
    DISTANT,
    OUTPUT,
    SIMILAR,
    Columns,
    Sections,
    Setting,
    file_header,
    forest,
    gain_rows,
    markdown,
    paired_rows,
)
from scripts.grid_scores import Scores, read_scores

GRIDS = {
    name: RESULTS / name / "experiment/runs.csv"
    for name in (
        "claims_multisource_cpu",
        "claims_multisource_whole_cpu",
        "claims_domain_cpu",
        "alignment_multisource_cpu",
        "claims_multisource_size_cpu",
    )
}
SEEDS_1K = tuple(range(1, 11))
SEEDS_WHOLE = (1, 2, 3)
DOMAIN = [("mrpc", "accuracy"), ("mrpc", "f1"), ("stsb", "pearson")]
HEADER = (
    "Written by `python -m scripts.multisource_verdicts` from the multi-source grids' `runs.csv`."
    " Dev scores (%), differences over fine-tuning {seeds}:"
    " mean ± std of the per-seed differences (paired t-test; [n=k]: k seeds only) or the"
    " difference of means with its 95% interval (Welch; n: seeds on each side); * p < 0.05;"
    " † p < 0.05 after Holm's adjustment for all tests of its table.\n"
)

QUORA = [("minilm", "tft"), ("minilm", "tft_simple")]
MULTI = [("minilm", "tft_multi"), ("minilm", "tft_simple_multi")]
NONE: Setting = ("minilm", "none")
CUT = (
    "Cut: `tft_simple_multi` on the whole training sets (a second 74k injection and 9 whole-set"
    " fine-tunings, about 10 one-core hours, for a variant within 1 point of `tft_multi` at 1k:"
    " H3); every other cell has its 10 seeds at 1k and 3 on the whole sets."
)


def sections_1k(scores: Scores) -> Sections:
    """The tables at 1k (seeds 1-10)."""
    injected = QUORA + MULTI
    single = [("minilm", f"tft_{source}") for source in ("twitter", "parasci", "quora")]
    multi, simple_multi = MULTI
    learned = ("minilm", "tft_multi_learned")
    mpnet = ("mpnet", "none")

    def rows(columns: Columns, comparisons: List[Tuple[Setting, Setting]]):
        return paired_rows(scores, columns, [(a, b, "1000") for a, b in comparisons])

    return [
        ("H1 at 1k: injection against none", SIMILAR, rows(SIMILAR, [(v, NONE) for v in injected])),
        (
            "More, more varied paraphrases at 1k: multi-source against Quora-only",
            SIMILAR,
            rows(SIMILAR, list(zip(MULTI, QUORA))),
        ),
        (
            "H3 at 1k: the simple model against the paper's",
            SIMILAR,
            rows(SIMILAR, [(simple_multi, multi)]),
        ),
        ("H4: distant tasks at 1k", DISTANT, rows(DISTANT, [(v, NONE) for v in injected])),
        (
            "Size against domain: 11k of one source, and the 74k mix",
            DOMAIN,
            rows(DOMAIN, [(v, NONE) for v in single + [multi]] + [(v, multi) for v in single]),
        ),
        (
            "The aligners: learned (tft_learned) against rule-based (tft_syntactic)",
            DOMAIN,
            rows(DOMAIN, [(learned, multi), (learned, NONE), (multi, NONE)]),
        ),
        (
            "Small against large: all-MiniLM-L6-v2 (22M) against all-mpnet-base-v2 (110M) at 1k",
            SIMILAR,
            rows(SIMILAR, [(small, mpnet) for small in (NONE, *MULTI)]),
        ),
    ]


def sections_whole(scores: Scores) -> Sections:
    """
    The tables of the whole training sets (seeds 1-3), and the gains' difference (H2), without
    `tft_simple_multi`: its whole-set cells were cut (claims_multisource_whole_cpu.jsonnet).
    """
    multi, _ = MULTI
    injected = QUORA + [multi]
    return [
        (
            "H1 on the whole training sets",
            SIMILAR,
            paired_rows(scores, SIMILAR, [(v, NONE, "all") for v in injected]),
        ),
        (
            "More, more varied paraphrases on the whole training sets",
            SIMILAR,
            paired_rows(scores, SIMILAR, [(multi, QUORA[0], "all")]),
        ),
        (
            "H2: gains with less data (Welch, 95% interval)",
            SIMILAR,
            gain_rows(scores, SIMILAR, injected, NONE),
        ),
    ]


def verdicts(seeds: Sequence[int] = SEEDS_1K) -> Tuple[str, str, Sections]:
    """
    The file's name and text, and its tables, over fine-tuning `seeds` (of 1-10; 1-3 on whole
    sets).
    """
    present = [path for path in GRIDS.values() if path.exists()]
    missing = [name for name, path in GRIDS.items() if not path.exists()]
    scores = read_scores(present, seeds=seeds)
    at_1k, whole = sections_1k(scores), sections_whole(scores)
    name, header = file_header(
        "verdicts_multisource", HEADER, seeds, SEEDS_1K, "seeds (1-10 at 1k, 1-3 on the whole sets)"
    )
    if missing:
        header += f"\nNot written yet (their tables are empty): {', '.join(missing)}.\n"
    header += f"\n{CUT}\n"
    whole_seeds = [seed for seed in seeds if seed in SEEDS_WHOLE]
    text = header + markdown(at_1k, len(seeds)) + markdown(whole, len(whole_seeds))
    return name, text, at_1k + whole


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS_1K))
    seeds = tuple(parser.parse_args().seeds)
    name, text, sections = verdicts(seeds)
    print(text)
    (OUTPUT / name).write_text(text)
    if seeds == SEEDS_1K:
        forest(sections, str(OUTPUT / "verdicts_multisource.png"))


if __name__ == "__main__":
    main()
