"""
The claims' verdicts with the multi-source injections beside the Quora-only ones, from the
multi-source grids' `runs.csv` (recipe `tuned`, dev scores in %): fine-tuning seeds 1-10 at 1k.
Every fine-tuning of these grids ran with one trainer (fused AdamW, sorted batches, bfloat16),
`none` and the Quora-only `tft` / `tft_simple` included, so that every row pairs runs of one recipe;
`research/results/claims/verdicts.md` keeps the claims grids' earlier verdicts (seeds 1-3, the
trainer before).

Each table is one family for Holm's adjustment (`claims_verdicts`):
- H1 at 1k: each injection minus `none`;
- more, more varied paraphrases: each multi-source injection minus its Quora-only one;
- H3: `tft_simple_multi - tft_multi`; H4: SST-2 and CoLA at 1k;
- size against domain: the 11k single-source injections and `tft_multi` minus `none`, and
  each single-source one minus `tft_multi` (MRPC, STS-B at 1k);
- the aligners: `tft_quora_learned` minus `tft_quora` (the same 11,000 Quora pairs aligned by
  the learned and the rule-based aligner), each minus `none`;
- small against large: MiniLM `none`, `tft_multi`, `tft_simple_multi` minus all-mpnet-base-v2
  `none` at 1k.

The multi-source injections were cut on the whole training sets (`CUT`, in the file's header); the
Quora-only ones' whole-set verdicts are `python -m research.scripts.claims_verdicts`'. A grid that
has not written its `runs.csv` yet is named in the file's header and its tables stay empty. Writes
`research/results/claims/verdicts_multisource.md` and `verdicts_multisource.png`:

    python -m research.scripts.multisource_verdicts

`--seeds 2 3 4 5 6 7 8 9 10` leaves out fine-tuning seed 1, on which the sweep of `none` chose
each task's recipe, and writes `verdicts_multisource_seeds_2-10.md` (no plot).
"""

import argparse
from typing import List, Sequence, Tuple

from research.scripts import RESULTS
from research.scripts.claims_verdicts import (
    DISTANT,
    OUTPUT,
    SIMILAR,
    Columns,
    Sections,
    Setting,
    file_header,
    forest,
    markdown,
    paired_rows,
)
from research.scripts.grid_scores import Scores, read_scores

GRIDS = {
    name: RESULTS / name / "experiment/runs.csv"
    for name in (
        "claims_multisource_cpu",
        "claims_domain_cpu",
        "alignment_multisource_cpu",
        "claims_multisource_size_cpu",
    )
}
SEEDS_1K = tuple(range(1, 11))
DOMAIN = [("mrpc", "accuracy"), ("mrpc", "f1"), ("stsb", "pearson")]
HEADER = (
    "Written by `python -m research.scripts.multisource_verdicts` from the multi-source grids'"
    " `runs.csv`."
    " Dev scores (%), differences over fine-tuning {seeds}:"
    " mean ± std of the per-seed differences (paired t-test; [n=k]: k seeds only) or the"
    " difference of means with its 95% interval (Welch; n: seeds on each side); * p < 0.05;"
    " † p < 0.05 after Holm's adjustment for all tests of its table.\n"
)

QUORA = [("minilm", "tft"), ("minilm", "tft_simple")]
MULTI = [("minilm", "tft_multi"), ("minilm", "tft_simple_multi")]
NONE: Setting = ("minilm", "none")
CUT = (
    "Cut: the multi-source injections on the whole training sets (claims_multisource_whole_cpu),"
    " and with them H2's multi-source cells. Their encoder is a 74k injection of 4-6 one-core hours"
    " that must run without a break and be fine-tuned (about 4 more core-hours) on the machine"
    " that built it (encoders are not in git and do not reproduce across machines), longer than"
    " a session's machine lives; the Quora-only whole-set verdicts (3 seeds) are in"
    " verdicts.md. Every cell here has its 10 seeds at 1k."
)


def sections_1k(scores: Scores) -> Sections:
    """The tables at 1k (seeds 1-10)."""
    injected = QUORA + MULTI
    single = [("minilm", f"tft_{source}") for source in ("twitter", "parasci", "quora")]
    multi, simple_multi = MULTI
    learned, rules = ("minilm", "tft_quora_learned"), ("minilm", "tft_quora")
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
            "The aligners: 11k Quora pairs aligned by the learned tft_learned and the rule-based"
            " tft_syntactic",
            DOMAIN,
            rows(DOMAIN, [(learned, rules), (learned, NONE), (rules, NONE)]),
        ),
        (
            "Small against large: all-MiniLM-L6-v2 (22M) against all-mpnet-base-v2 (110M) at 1k",
            SIMILAR,
            rows(SIMILAR, [(small, mpnet) for small in (NONE, *MULTI)]),
        ),
    ]


def verdicts(seeds: Sequence[int] = SEEDS_1K) -> Tuple[str, str, Sections]:
    """The file's name and text, and its tables, over fine-tuning `seeds` (of 1-10)."""
    present = [path for path in GRIDS.values() if path.exists()]
    missing = [name for name, path in GRIDS.items() if not path.exists()]
    at_1k = sections_1k(read_scores(present, seeds=seeds))
    name, header = file_header("verdicts_multisource", HEADER, seeds, SEEDS_1K, "seeds (1-10)")
    if missing:
        header += f"\nNot written yet (their tables are empty): {', '.join(missing)}.\n"
    header += f"\n{CUT}\n"
    return name, header + markdown(at_1k, len(seeds)), at_1k


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
