"""
A grid's runs in MLflow (`tft-experiment --mlflow`): each run that finishes here becomes one MLflow
run, logged from the files its `allennlp train` wrote, so that tracking changes nothing a run
trains (its config and fingerprint stay as they were, and a grid tracked or not reuses the same
finished runs).
"""

import glob
import json
import logging
import os
import re
from dataclasses import dataclass
from typing import Dict

from tft_allennlp.training.callbacks.mlflow import (
    config_parameters,
    epoch_metrics,
    experiment_named,
    final_metrics,
    log_batches,
    mlflow_client,
)
from tft_experiments.runs import GlueRun, Run, grid_of

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GridTracking:
    """The MLflow store (`tracking_uri`, absolute) and experiment a grid's runs are logged to."""

    tracking_uri: str
    experiment_name: str


def run_tags(run: Run) -> Dict[str, str]:
    """The grid coordinates of `run`, as MLflow tags."""
    grid, relative = grid_of(run)
    tags = {
        "grid": os.path.abspath(grid),
        "run": relative,
        "base": run.base,
        "variant": run.variant,
    }
    if isinstance(run, GlueRun):
        tags.update(
            task=run.task,
            train_size=run.size_name,
            seed=str(run.seed),
            strategy=run.strategy,
            recipe=run.recipe,
            candidate=run.candidate,
        )
    else:
        tags.update(task="injection", seed=str(run.seed))
    return tags


def log_finished_run(tracking: GridTracking, run: Run) -> str:
    """
    Logs the run `run` finished here as one MLflow run: its config's parameters, each epoch's
    metrics (`metrics_epoch_N.json`, step N), its final metrics (`metrics.json`), its config,
    metrics and training log as artifacts, tagged with its coordinates (`run_tags`). Returns
    the MLflow run's id.
    """
    client = mlflow_client(tracking.tracking_uri)
    experiment_id = experiment_named(client, tracking.experiment_name)
    tags = run_tags(run)
    mlflow_run = client.create_run(experiment_id, run_name=tags["run"], tags=tags)
    run_id = mlflow_run.info.run_id
    config_path = os.path.join(run.directory, "config.json")
    with open(config_path) as stream:
        parameters, left_out = config_parameters(json.load(stream))
    for key, length in left_out:
        logger.warning(
            "MLflow: %s: the parameter %s (%d characters) is not logged", run, key, length
        )
    log_batches(client, run_id, parameters=parameters)
    epochs = glob.glob(os.path.join(glob.escape(run.directory), "metrics_epoch_*.json"))
    for path in epochs:
        epoch = int(re.findall(r"(\d+)\.json$", path)[0])
        with open(path) as stream:
            log_batches(client, run_id, metrics=epoch_metrics(json.load(stream)), step=epoch)
    with open(os.path.join(run.directory, "metrics.json")) as stream:
        log_batches(client, run_id, metrics=final_metrics(json.load(stream)))
    for name in ("config.json", "metrics.json", "train.log"):
        path = os.path.join(run.directory, name)
        if os.path.isfile(path):
            client.log_artifact(run_id, path)
    client.set_terminated(run_id, status="FINISHED")
    return run_id
