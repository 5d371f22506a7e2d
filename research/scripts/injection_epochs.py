"""
The per-epoch dev accuracies of injections, as a markdown table: what the paper's stopping rule
(the second decrease of the dev phrasal accuracy) saw, epoch by epoch, and where it stopped.

    python -m research.scripts.injection_epochs \
        research/results/GRID/experiment/injection/minilm/tft_multi ...

Reads each run's `metrics_epoch_<k>.json` (AllenNLP writes one per finished epoch; not kept in git:
on the machine that trained it), or the per-epoch metrics of its row in the grid's table of finished
runs where the grid keeps them there; the epoch that the row's metrics name as `best_epoch` is
marked, and a run without a row is marked as still running. Under the table, the hours each
injection took over all its attempts, from the grid's `attempts.jsonl` (an attempt is recorded when
it ends): AllenNLP's `training_duration` restarts with every resumption. An epoch resumed from a
checkpoint within it reports the training loss of the batches after the resumption only
(docs/recovery.md); its dev accuracies are exact.
"""

import argparse
import json
import pathlib
import re
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

from research.scripts.grid_hours import attempts
from tft_experiments.table import finished_row

_EPOCH_FILE = re.compile(r"metrics_epoch_(\d+)\.json")


def run_row(run: pathlib.Path) -> Optional[Dict[str, Any]]:
    """The row of the injection in `run` in its grid's table (EXPERIMENT/injection/BASE/NAME)."""
    experiment = run.resolve().parents[2]
    return finished_row(str(experiment), run.resolve().relative_to(experiment).as_posix())


def epoch_metrics(run: pathlib.Path, row: Optional[Dict[str, Any]]) -> List[Tuple[int, Dict]]:
    """(epoch, its metrics) of every finished epoch of `run`: from its files, else its row."""
    found = []
    for path in run.iterdir() if run.is_dir() else []:
        match = _EPOCH_FILE.fullmatch(path.name)
        if match:
            found.append((int(match.group(1)), json.loads(path.read_text())))
    if found:
        return sorted(found, key=lambda epoch: epoch[0])
    return list(enumerate((row or {}).get("epochs", [])))


def epoch_rows(run: pathlib.Path) -> List[str]:
    """One markdown row per finished epoch of the injection in `run`."""
    row = run_row(run)
    epochs = epoch_metrics(run, row)
    if not epochs:
        raise ValueError(
            f"{run}: no metrics_epoch_<k>.json (not an injection run, or no epoch yet)"
        )
    best = None if row is None else row["metrics"]["best_epoch"]
    rows = []
    for epoch, metrics in epochs:
        note = "best (kept)" if epoch == best else ""
        rows.append(
            f"| {run.name} | {epoch} | {100 * metrics['validation_sentence_accuracy']:.2f} "
            f"| {100 * metrics['validation_phrase_accuracy']:.2f} "
            f"| {metrics['training_loss']:.4f} | {note} |"
        )
    if best is None:
        rows.append(f"| {run.name} | {epochs[-1][0] + 1} | | | | running |")
    return rows


def attempt_hours(run: pathlib.Path) -> str:
    """
    `NAME: N attempts, H hours` from the `attempts.jsonl` of the grid that holds `run`, which
    records an attempt when it ends: a run still training adds "and the one in progress".
    """
    experiment = run.resolve().parents[2]  # EXPERIMENT/injection/BASE/NAME
    relative = run.resolve().relative_to(experiment).as_posix()
    recorded = attempts(experiment) if (experiment / "attempts.jsonl").exists() else []
    hours = [spent for directory, _, spent in recorded if directory == relative]
    plural = "" if len(hours) == 1 else "s"
    running = "" if run_row(run) is not None else ", and the one in progress"
    return f"{run.name}: {len(hours)} attempt{plural}, {sum(hours):.1f} hours{running}"


def table(runs: Sequence[pathlib.Path]) -> str:
    lines = [
        "| injection | epoch | dev sentence acc | dev phrase acc | training loss | |",
        "|---|---|---|---|---|---|",
    ]
    for run in runs:
        lines += epoch_rows(run)
    hours = "; ".join(attempt_hours(run) for run in runs)
    return "\n".join(lines) + f"\n\nTime on one core each, all attempts: {hours}.\n"


def main(argv: Sequence[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=pathlib.Path, help="injection run directories")
    args = parser.parse_args(argv)
    sys.stdout.write(table(args.runs))


if __name__ == "__main__":
    main(sys.argv[1:])
