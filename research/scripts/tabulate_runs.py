"""
Builds the table of finished runs (`runs.jsonl`) of grids made before the harness kept one, from
their run directories: one row per directory with a `metrics.json`, the last finishing attempt's
times from `attempts.jsonl` (`tft_experiments/table.py` says what a row holds). A directory
that the table already has is left as it is, so running it again adds nothing.

    python -m research.scripts.tabulate_runs research/results/*/experiment \
        --epochs research/results/claims_size_epochs_cpu/experiment

`--epochs` keeps the per-epoch metrics (`metrics_epoch_<k>.json`) of that grid's runs in their
rows, where they are its subject. A `reused_from` that names a grid where it was before the
results moved (`results/...`, now `research/results/...`) names where it is now.
"""

import argparse
import os
import sys
from typing import Sequence

from tft_experiments.table import (
    append_row,
    finishing_attempts,
    row_from_directory,
    unrecorded_directories,
)

# Where the results were, and are (a `reused_from` may name the old place).
MOVED = ("results/", "research/results/")


def tabulate(grid: str, epochs: bool = False) -> int:
    """Appends the rows of the finished runs of `grid` that its table lacks; how many."""
    times = finishing_attempts(grid)
    added = 0
    for relative in unrecorded_directories(grid):
        started, ended = times.get(relative, (None, None))
        row = row_from_directory(grid, relative, epochs, started=started, ended=ended)
        if row is None:
            continue
        source = row.get("reused_from")
        if source is not None and source.startswith(MOVED[0]) and not os.path.isdir(source):
            row["reused_from"] = MOVED[1] + source[len(MOVED[0]) :]
        append_row(grid, row)
        added += 1
    return added


def main(argv: Sequence[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("grids", nargs="+", help="experiment output directories")
    parser.add_argument(
        "--epochs", nargs="*", default=[], help="grids whose rows keep per-epoch metrics"
    )
    args = parser.parse_args(argv)
    with_epochs = {os.path.normpath(grid) for grid in args.epochs}
    for grid in args.grids:
        added = tabulate(grid, os.path.normpath(grid) in with_epochs)
        print(f"{grid}: {added} rows added")


if __name__ == "__main__":
    main(sys.argv[1:])
