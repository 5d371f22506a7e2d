"""
What the finished runs of an experiment say, read from their directories: whether a run has
finished, its dev metrics, which candidate recipe the sweep chose, which encoder an injection
exported (its fingerprint), and one row per finished run for the report. Everything here
reads the disk; the spec itself never does.
"""

import glob
import hashlib
import json
import logging
import math
import os
import statistics
from typing import Any, Dict, List, Optional

import torch
from safetensors.torch import load_file

from tft_allennlp.experiments.runs import GlueRun, InjectionRun, Run
from tft_allennlp.experiments.spec import ExperimentSpec, TunedKey, selection_metric
from tft_allennlp.training.callbacks.parameter_counts import PARAMETER_COUNTS

logger = logging.getLogger(__name__)

# In an injection's directory (committed with it): the fingerprint of the encoder it exported.
FINGERPRINT = "encoder_fingerprint.json"


def is_finished(run: Run) -> bool:
    """
    A run is finished when it wrote `metrics.json` (and an injection, its exported encoder); a
    damaged one (empty, cut short: a disk that filled up, a copy that broke off) is named in a
    warning and the run counts as unfinished, so that it runs again.
    """
    if read_metrics_file(os.path.join(run.directory, "metrics.json")) is None:
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
    """
    The fingerprint an injection records (`FINGERPRINT` in its directory or, while it runs again,
    `DIRECTORY.fingerprint.json` beside it: `allennlp train -f` empties the directory first);
    None if it has none.
    """
    for path in (os.path.join(run.directory, FINGERPRINT), kept_fingerprint(run)):
        try:
            with open(path) as handle:
                return json.load(handle)["sha256"]
        except FileNotFoundError:
            continue
    return None


def kept_fingerprint(run: InjectionRun) -> str:
    """Where an injection's record is kept while it runs again."""
    return run.directory.rstrip("/") + ".fingerprint.json"


def read_metrics(directory: str, metric_epoch: str) -> Optional[Dict[str, float]]:
    """
    The dev metrics of a finished run (None if unfinished): after the last epoch
    (`metric_epoch="last"`) or of the epoch that was best on dev (`"best"`), without the prefix.
    """
    metrics = read_metrics_file(os.path.join(directory, "metrics.json"))
    if metrics is None:
        return None
    prefix = "validation_" if metric_epoch == "last" else "best_validation_"
    return {
        key[len(prefix) :]: value
        for key, value in metrics.items()
        if key.startswith(prefix) and key != prefix + "loss"
    }


def read_metrics_file(path: str) -> Optional[Dict[str, Any]]:
    """The metrics in `path`; None if it is missing, or damaged (with a warning naming it)."""
    try:
        with open(path, encoding="utf-8") as handle:
            metrics = json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        logger.warning("%s: damaged (%s); its run counts as unfinished.", path, error)
        return None
    if not isinstance(metrics, dict):
        logger.warning("%s: damaged (not a JSON object); its run counts as unfinished.", path)
        return None
    return metrics


def tuned_choice(spec: ExperimentSpec, key: TunedKey) -> Optional[str]:
    """
    The candidate with the best mean dev score over `sweep_seeds` on the base model (the first
    one on ties) for (base, task, train_size); None until all its sweep runs have finished.
    """
    scores: Dict[str, List[float]] = {}
    for run in spec.sweep_runs_of(key):
        metrics = read_metrics(run.directory, spec.metric_epoch)
        if metrics is None:
            return None
        scores.setdefault(run.candidate, []).append(metrics[selection_metric(run.task)])
    means = {candidate: statistics.mean(values) for candidate, values in scores.items()}
    # A correlation is NaN when a run predicts a constant: such a recipe ranks last.
    return max(
        means, key=lambda candidate: -math.inf if math.isnan(means[candidate]) else means[candidate]
    )


def read_trainable_parameters(directory: str) -> Optional[int]:
    """The trained parameters a run's `tft_parameter_counts` callback wrote, if it ran."""
    try:
        with open(os.path.join(directory, PARAMETER_COUNTS)) as handle:
            return int(json.load(handle)["trainable"])
    except (OSError, ValueError, KeyError):
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
        metrics = read_metrics(run.directory, spec.metric_epoch)
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
        trainable = read_trainable_parameters(run.directory)
        if trainable is not None:
            row["trainable_parameters"] = trainable
        row["directory"] = os.path.relpath(run.directory, spec.output_dir)
        rows.append(row)
    return rows
