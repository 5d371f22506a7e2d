"""
The per-epoch dev accuracies of injections, as a markdown table: what the paper's stopping rule
(the second decrease of the dev phrasal accuracy) saw, epoch by epoch, and where it stopped.

    python -m scripts.injection_epochs results/GRID/experiment/injection/minilm/tft_multi ...

Reads each run's `metrics_epoch_<k>.json` (AllenNLP writes one per finished epoch); the epoch
that `metrics.json` names as `best_epoch` is marked, and a run without `metrics.json` is marked
as still running.
"""

import argparse
import json
import pathlib
import re
import sys
from typing import List, Sequence

_EPOCH_FILE = re.compile(r"metrics_epoch_(\d+)\.json")


def epoch_rows(run: pathlib.Path) -> List[str]:
    """One markdown row per finished epoch of the injection in `run`."""
    epochs = sorted(
        (int(match.group(1)), path)
        for path in run.iterdir()
        if (match := _EPOCH_FILE.fullmatch(path.name))
    )
    if not epochs:
        raise ValueError(
            f"{run}: no metrics_epoch_<k>.json (not an injection run, or no epoch yet)"
        )
    final = run / "metrics.json"
    best = json.loads(final.read_text())["best_epoch"] if final.exists() else None
    rows = []
    for epoch, path in epochs:
        metrics = json.loads(path.read_text())
        note = "best (kept)" if epoch == best else ""
        elapsed = metrics["training_duration"].split(".")[0]
        rows.append(
            f"| {run.name} | {epoch} | {100 * metrics['validation_sentence_accuracy']:.2f} "
            f"| {100 * metrics['validation_phrase_accuracy']:.2f} "
            f"| {metrics['training_loss']:.4f} | {elapsed} | {note} |"
        )
    if best is None:
        rows.append(f"| {run.name} | {epochs[-1][0] + 1} | | | | | running |")
    return rows


def table(runs: Sequence[pathlib.Path]) -> str:
    lines = [
        "| injection | epoch | dev sentence acc | dev phrase acc | training loss "
        "| training time so far | |",
        "|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        lines += epoch_rows(run)
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=pathlib.Path, help="injection run directories")
    args = parser.parse_args(argv)
    sys.stdout.write(table(args.runs))


if __name__ == "__main__":
    main(sys.argv[1:])
