"""
What the finished runs of an experiment say, read from the grid's table of finished runs
(`table.py`): whether a run has finished, its dev metrics, which candidate recipe the sweep chose,
which encoder an injection exported (its fingerprint), and one row per finished run for the
report. Everything here reads the disk; the spec itself never does.
"""

import glob
import hashlib
import logging
import math
import os
import statistics
from typing import Any, Dict, List, Optional

import torch
from safetensors.torch import load_file

from tft_experiments.expansion import TunedKey
from tft_experiments.runs import GlueRun, InjectionRun, Run, grid_of
from tft_experiments.spec import ExperimentSpec
from tft_experiments.table import finished_row, read_metrics_file  # noqa: F401  (re-exported)

logger = logging.getLogger(__name__)


def run_row(run: Run) -> Optional[Dict[str, Any]]:
    """The row of `run` in its grid's table of finished runs; None while it is unfinished."""
    return finished_row(*grid_of(run))


def is_finished(run: Run) -> bool:
    """
    A run is finished when its grid's table has its row (`table.finished_row`: or its directory
    a `metrics.json`, where the table has no line of it), whether its directory is on disk or
    not; an injection, when its exported encoder is on disk too (a fine-tuning needs it).
    """
    if run_row(run) is None:
        return False
    return not isinstance(run, InjectionRun) or os.path.exists(
        os.path.join(run.encoder, "config.json")
    )


def encoder_fingerprint(encoder: str) -> str:
    """
    The SHA-256 of an exported encoder's weights (every tensor of its safetensors files: name,
    dtype, shape and values, in name order): equal for the same weights however they were saved.
    """
    digest = hashlib.sha256()
    paths = sorted(glob.glob(os.path.join(encoder, "*.safetensors")))
    if not paths:
        raise FileNotFoundError(f"{encoder}: no *.safetensors weights to fingerprint")
    for path in paths:
        tensors = load_file(path)
        for name in sorted(tensors):
            tensor = tensors[name].contiguous()
            digest.update(f"{name} {tensor.dtype} {tuple(tensor.shape)}\n".encode())
            digest.update(tensor.view(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def read_fingerprint(run: InjectionRun) -> Optional[str]:
    """The fingerprint of the encoder that an injection's row records; None if it has none."""
    row = run_row(run)
    return None if row is None else row.get("encoder_sha256")


def read_metrics(run: Run, metric_epoch: str) -> Optional[Dict[str, float]]:
    """
    The dev metrics of a finished run (None if unfinished), from its row: after the last epoch
    (`metric_epoch="last"`) or of the epoch that was best on dev (`"best"`), without the prefix.
    """
    row = run_row(run)
    return None if row is None else dev_metrics(row["metrics"], metric_epoch)


def dev_metrics(metrics: Dict[str, Any], metric_epoch: str) -> Dict[str, float]:
    """The dev metrics of a run's `metrics.json` (see `read_metrics`)."""
    prefix = "validation_" if metric_epoch == "last" else "best_validation_"
    return {
        key[len(prefix) :]: value
        for key, value in metrics.items()
        if key.startswith(prefix) and key != prefix + "loss"
    }


def tuned_choice(spec: ExperimentSpec, key: TunedKey) -> Optional[str]:
    """
    The candidate with the best mean dev score over `sweep_seeds` on the base model (the first
    one on ties) for (base, task, train_size); None until all its sweep runs have finished.
    """
    scores: Dict[str, List[float]] = {}
    for run in spec.sweep_runs_of(key):
        metrics = read_metrics(run, spec.metric_epoch)
        if metrics is None:
            return None
        scores.setdefault(run.candidate, []).append(metrics[spec.selection_metric(run.task)])
    means = {candidate: statistics.mean(values) for candidate, values in scores.items()}
    # A correlation is NaN when a run predicts a constant: such a recipe ranks last.
    return max(
        means, key=lambda candidate: -math.inf if math.isnan(means[candidate]) else means[candidate]
    )


def read_trainable_parameters(run: Run) -> Optional[int]:
    """The trained parameters a run's `tft_parameter_counts` callback counted, if it ran."""
    row = run_row(run)
    try:
        return int(row["parameters"]["trainable"])  # type: ignore[index]
    except (TypeError, KeyError, ValueError):
        return None


def tuned_choices(spec: ExperimentSpec) -> Dict[TunedKey, str]:
    """The sweep's choice for every (base, task, train_size) whose sweep has finished."""
    choices = {key: tuned_choice(spec, key) for key in spec.tuned_keys()}
    return {key: choice for key, choice in choices.items() if choice is not None}


def collect_results(
    spec: ExperimentSpec, runs: Optional[List[GlueRun]] = None
) -> List[Dict[str, Any]]:
    """
    One row per finished GLUE run (of the reported grid, or of `runs`): its coordinates, the
    candidate recipe it ran with and its dev metrics (a multitask run: one row per task, with
    that task's metrics under GLUE's names).
    """
    rows = []
    for run in spec.glue_runs(tuned_choices(spec)) if runs is None else runs:
        metrics = read_metrics(run, spec.metric_epoch)
        if metrics is None:
            continue
        if run.is_multitask:
            # `mrpc_f1`, `stsb_pearson`, ...: the reported task's metrics, without its prefix.
            prefix = f"{run.task}_"
            metrics = {
                key[len(prefix) :]: value
                for key, value in metrics.items()
                if key.startswith(prefix)
            }
        row: Dict[str, Any] = {
            "base": run.base,
            "variant": run.variant,
            "strategy": run.strategy,
            "recipe": run.recipe,
            "candidate": run.candidate,
            "task": run.task,
            "train_size": run.size_name,
            "seed": run.seed,
            **metrics,
        }
        trainable = read_trainable_parameters(run)
        if trainable is not None:
            row["trainable_parameters"] = trainable
        row["directory"] = os.path.relpath(run.directory, spec.output_dir)
        rows.append(row)
    return rows
