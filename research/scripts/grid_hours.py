"""
The time that experiment grids took, from each grid's `attempts.jsonl`, as a markdown table: the
hours of injections and of fine-tunings (the recipe sweep included), the share of them spent in
attempts that did not finish (`stopped`, `failed`, `lost`: a stopped or lost attempt goes on
from its checkpoint, a failed one is trained again), and the total, with a row summing the grids.

    python -m research.scripts.grid_hours research/results/claims_multisource_cpu/experiment \
        research/results/claims_domain_cpu/experiment

A run taken from another grid (outcome `reused`) costs nothing here: it is counted in the grid
that trained it. The project's grids run one run per core (`OMP_NUM_THREADS=1`, `--jobs 1` a
process), so there an attempt's hour is an hour of one core. An attempt is recorded when it
ends: one in progress is not counted.
"""

import argparse
import json
import pathlib
import sys
from typing import Dict, List, Sequence, Tuple

UNFINISHED = ("stopped", "failed", "lost")
KINDS = ("injection", "fine-tuning")


def attempts(experiment: pathlib.Path) -> List[Tuple[str, str, float]]:
    """
    Every attempt the grid in `experiment` recorded in its `attempts.jsonl`: (run directory
    relative to it, outcome, hours); a line that is not an attempt record is named.
    """
    log = experiment / "attempts.jsonl"
    if not log.exists():
        raise FileNotFoundError(f"{log}: no attempts recorded (not an experiment directory?)")
    recorded = []
    for number, line in enumerate(log.read_text().splitlines(), start=1):
        try:
            record = json.loads(line)
            hours = (record["ended"] - record["started"]) / 3600
            recorded.append((record["directory"], record["outcome"], hours))
        except (ValueError, KeyError) as error:
            raise ValueError(f"{log}, line {number}: not an attempt record ({error})") from None
    return recorded


def grid_hours(experiment: pathlib.Path) -> Dict[str, Dict[str, float]]:
    """
    Hours of the grid in `experiment` by kind ("injection", "fine-tuning"): `hours` in all,
    `unfinished` of them in attempts that did not finish, and `attempts` (not counting reuses).
    """
    totals = {kind: {"hours": 0.0, "unfinished": 0.0, "attempts": 0} for kind in KINDS}
    for directory, outcome, hours in attempts(experiment):
        if outcome == "reused":
            continue
        kind = "injection" if directory.startswith("injection/") else "fine-tuning"
        totals[kind]["hours"] += hours
        totals[kind]["attempts"] += 1
        if outcome in UNFINISHED:
            totals[kind]["unfinished"] += hours
    return totals


def table(experiments: Sequence[pathlib.Path]) -> str:
    """The markdown table of `experiments`, one row each and their sum."""
    lines = [
        "| grid | injections: attempts | hours | fine-tunings: attempts | hours "
        "| hours of unfinished attempts | total hours |",
        "|---|---|---|---|---|---|---|",
    ]
    rows: List[Dict[str, Dict[str, float]]] = []
    for experiment in experiments:
        rows.append(grid_hours(experiment))
        lines.append(_row(_grid_name(experiment), rows[-1]))
    if len(rows) > 1:
        summed = {
            kind: {key: sum(row[kind][key] for row in rows) for key in rows[0][kind]}
            for kind in KINDS
        }
        lines.append(_row("all", summed))
    return "\n".join(lines) + "\n"


def _grid_name(experiment: pathlib.Path) -> str:
    """`research/results/NAME/experiment` -> NAME; any other folder by its own name."""
    resolved = experiment.resolve()
    return resolved.parent.name if resolved.name == "experiment" else resolved.name


def _row(name: str, totals: Dict[str, Dict[str, float]]) -> str:
    injection, fine_tuning = totals["injection"], totals["fine-tuning"]
    unfinished = injection["unfinished"] + fine_tuning["unfinished"]
    total = injection["hours"] + fine_tuning["hours"]
    return (
        f"| {name} | {injection['attempts']:.0f} | {injection['hours']:.1f} "
        f"| {fine_tuning['attempts']:.0f} | {fine_tuning['hours']:.1f} | {unfinished:.1f} "
        f"| {total:.1f} |"
    )


def main(argv: Sequence[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "experiments", nargs="+", type=pathlib.Path, help="experiment output directories"
    )
    sys.stdout.write(table(parser.parse_args(argv).experiments))


if __name__ == "__main__":
    main(sys.argv[1:])
