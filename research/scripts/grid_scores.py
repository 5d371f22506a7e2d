"""
The dev scores of finished experiment grids, read from the `runs.csv` that
`allennlp tft-experiment` writes: the one loader of the analysis scripts that compare runs
across or within grids (`claims_verdicts`, `claims_size_tables`, `adapter_variants`).
"""

import csv
import pathlib
from collections import defaultdict
from typing import Dict, NamedTuple, Optional, Sequence, Union


class ScoreKey(NamedTuple):
    """A setting of a grid, the fine-tuning seed aside, and one of its dev metrics."""

    base: str
    variant: str
    strategy: str
    task: str
    metric: str
    train_size: str  # as runs.csv writes it: "1000", "all"


# A setting -> fine-tuning seed -> dev score in percent.
Scores = Dict[ScoreKey, Dict[int, float]]


def read_scores(
    paths: Sequence[Union[str, pathlib.Path]],
    recipe: str = "tuned",
    seeds: Optional[Sequence[int]] = None,
) -> Scores:
    """
    The dev scores (x 100) of the runs of `recipe` in the grids' `runs.csv` files `paths`, of
    every fine-tuning seed or of `seeds` only. A run that two grids hold (a grid that reused
    another's runs) must have the same score in both: a `ValueError` names the file otherwise.
    A missing file is an error too, not an empty grid.
    """
    scores: Scores = defaultdict(dict)
    for path in paths:
        with open(path, newline="") as handle:
            for line, row in enumerate(csv.DictReader(handle), start=2):
                if row["recipe"] != recipe:
                    continue
                seed = int(row["seed"])
                if seeds is not None and seed not in seeds:
                    continue
                key = ScoreKey(
                    row["base"],
                    row["variant"],
                    row["strategy"],
                    row["task"],
                    row["metric"],
                    row["train_size"],
                )
                value = 100 * float(row["value"])
                if scores[key].get(seed, value) != value:
                    raise ValueError(
                        f"{path}:{line}: {key} seed {seed} scores {value}, another grid "
                        f"{scores[key][seed]}"
                    )
                scores[key][seed] = value
    return scores
