"""
Runs an experiment grid resumably: every injection and every GLUE fine-tuning is an ordinary
`allennlp train` of the project's configs (with overrides, never copies) in a child process,
with its config, metrics and log in its own directory. A run whose `metrics.json` exists is
finished and skipped; an unfinished one is run again from scratch, up to `retries` more times,
and then reported as failed. The order is: injections, the recipe sweep on the base models,
then the reported grid.
"""
import glob
import json
import logging
import os
import subprocess
import sys
from typing import Any, Dict, List, Optional, Union

from allennlp.common.tqdm import Tqdm

from tft_allennlp.commands.export import export_encoder
from tft_allennlp.experiments.spec import ExperimentSpec, GlueRun, InjectionRun, read_metrics, size_name

logger = logging.getLogger(__name__)

LOG = "train.log"


def is_finished(directory: str) -> bool:
    return os.path.exists(os.path.join(directory, "metrics.json"))


def seed_overrides(seed: int) -> Dict[str, int]:
    return {"random_seed": seed, "numpy_seed": seed, "pytorch_seed": seed}


def allennlp_train(config: str, directory: str, overrides: Dict[str, Any], environment: Dict[str, str]) -> bool:
    """
    `allennlp train CONFIG -s DIRECTORY -f -o OVERRIDES` in a child process, its output in
    `DIRECTORY.log` while it runs and moved to `DIRECTORY/train.log` after; True on success.
    """
    log_path = directory.rstrip("/") + ".log"
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    command = [sys.executable, "-m", "allennlp", "train", config, "-s", directory, "-f"]
    command += ["--file-friendly-logging", "-o", json.dumps(overrides), "--include-package", "tft_allennlp"]
    with open(log_path, "w") as log:
        returncode = subprocess.run(
            command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **environment}
        ).returncode
    if os.path.isdir(directory):
        os.replace(log_path, os.path.join(directory, LOG))
    return returncode == 0 and is_finished(directory)


class ExperimentRunner:
    """
    Runs the injections, then the GLUE fine-tunings, of `spec`, skipping finished runs.
    `statuses` maps each run directory to "skipped" (finished before), "done" or "failed".
    """

    def __init__(self, spec: ExperimentSpec) -> None:
        self.spec = spec
        self.statuses: Dict[str, str] = {}

    def run(self) -> Dict[str, str]:
        for injection in Tqdm.tqdm(list(self.spec.injection_runs()), desc="injection"):
            self._attempt(injection)
        for sweep_run in Tqdm.tqdm(list(self.spec.sweep_runs()), desc="recipe sweep"):
            self._attempt(sweep_run)
        # The tuned recipe is known only now; a sweep that failed leaves its grid cell unrun.
        for base, task, size in self.spec.untuned():
            key = f"tuned:{base}/{task}/n{size_name(size)}"
            self.statuses[key] = "failed"
            logger.error("%s: the recipe sweep did not finish, so the tuned runs were not started.", key)
        for glue_run in Tqdm.tqdm(list(self.spec.glue_runs()), desc="fine-tuning"):
            self._attempt(glue_run)
        failed = [directory for directory, status in self.statuses.items() if status == "failed"]
        for directory in failed:
            log = os.path.join(directory, LOG)
            # A run that failed before allennlp created its directory keeps the log beside it.
            logger.error("Failed: %s (see %s)", directory, log if os.path.exists(log) else directory + ".log")
        return self.statuses

    def _attempt(self, run: Union[InjectionRun, GlueRun]) -> None:
        if run.directory in self.statuses:  # a sweep run that is also in the reported grid
            return
        if isinstance(run, GlueRun) and self._model_path(run) is None:
            self.statuses[run.directory] = "failed"
            logger.error("%s: its injection failed, not fine-tuned.", run.directory)
            return
        if self._finished(run):
            self.statuses[run.directory] = "skipped"
            return
        for attempt in range(1 + self.spec.retries):
            if attempt:
                logger.warning("Retrying %s (attempt %d)", run.directory, attempt + 1)
            if self._execute(run):
                self.statuses[run.directory] = "done"
                if isinstance(run, GlueRun) and not self.spec.keep_weights:
                    for path in glob.glob(os.path.join(run.directory, "*.th")):
                        os.remove(path)
                    os.remove(os.path.join(run.directory, "model.tar.gz"))
                return
        self.statuses[run.directory] = "failed"

    def _finished(self, run: Union[InjectionRun, GlueRun]) -> bool:
        if isinstance(run, InjectionRun):
            return is_finished(run.directory) and os.path.exists(os.path.join(run.encoder, "config.json"))
        return is_finished(run.directory)

    def _execute(self, run: Union[InjectionRun, GlueRun]) -> bool:
        base_model = self.spec.base_models[run.base]
        if isinstance(run, InjectionRun):
            environment = {"TFT_MODEL": base_model, "TFT_PARAPHRASE_CORPUS": self.spec.paraphrase_corpus}
            overrides = {**seed_overrides(self.spec.injection_seed), **self.spec.injection_overrides}
            if not allennlp_train(run.config, run.directory, overrides, environment):
                return False
            export_encoder(os.path.join(run.directory, "model.tar.gz"), run.encoder)
            return True
        environment = {"TFT_MODEL": self._model_path(run), "GLUE_DIR": self.spec.glue_dir}
        overrides: Dict[str, Any] = {**seed_overrides(run.seed), "dataset_reader.seed": run.seed}
        overrides["dataset_reader.train_size"] = run.train_size
        overrides.update(self.spec.glue_overrides)
        overrides.update(self.spec.candidates()[run.candidate])
        return allennlp_train(run.config, run.directory, overrides, environment)

    def _model_path(self, run: GlueRun) -> Optional[str]:
        """The base checkpoint, or the exported encoder of the run's injection (None if failed)."""
        for injection in self.spec.injection_runs():
            if (injection.base, injection.variant) == (run.base, run.variant):
                return injection.encoder if self.statuses.get(injection.directory) != "failed" else None
        return self.spec.base_models[run.base]


def collect_results(spec: ExperimentSpec, runs: Optional[List[GlueRun]] = None) -> List[Dict[str, Any]]:
    """
    One row per finished GLUE run (of the reported grid, or of `runs`): its coordinates, the
    candidate recipe it ran with and its dev metrics.
    """
    rows = []
    for run in spec.glue_runs() if runs is None else runs:
        metrics = read_metrics(run.directory, spec.metric_epoch)
        if metrics is None:
            continue
        row: Dict[str, Any] = {
            "base": run.base, "variant": run.variant, "recipe": run.recipe, "candidate": run.candidate,
            "task": run.task, "train_size": run.size_name, "seed": run.seed, **metrics,
        }
        row["directory"] = os.path.relpath(run.directory, spec.output_dir)
        rows.append(row)
    return rows
