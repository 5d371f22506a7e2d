"""
The attempts at one run of a grid, in a job slot of the runner (`runner.py`): taken from another
grid of `reuse_from` where one finished it with the same config (`reuse.py`), else trained, and
tried again, up to `retries` more times, when it fails.

Every injection and every GLUE fine-tuning is an ordinary `allennlp train` of the project's configs
(with overrides, never copies) in a child process, with its config, metrics and log in its own
directory. A strategy other than the cross-encoder trains a one-call jsonnet generated under
`OUTPUT_DIR/configs/` that calls a function of the project's `training_configs/common/` (see
`strategies/`). A run that finishes appends its row to the grid's table of finished runs
(`runs.jsonl`, `table.py`: its config fingerprint, metrics, times, parameter counts, an
injection's encoder fingerprint). An attempt that was killed (a crash, or the machine or the
harness going away) resumes from the last checkpoint its directory holds when that run's config
is this one (`resumable`: `allennlp train --recover`, which the project's configs make end as an
uninterrupted run would, bit for bit); anything else, and an attempt after a resumption that
failed, starts from scratch. A resumption that SIGKILL ended (an out-of-memory killer) did not
fail by itself: the attempt after it resumes again.

An injection records the fingerprint of the encoder it exported (its row's `encoder_sha256`,
which stays while it runs again); one run again must export that very encoder when a finished
fine-tuning of the grid used it, or it fails (and its new encoder is deleted, its row kept)
rather than let the grid fine-tune two different encoders under one name. A record that no
finished fine-tuning used (taken alone from another grid) gives way to the new encoder: a
rebuild on another CPU exports other weights. Each attempt is logged (`attempt_log.py`).
"""

import glob
import logging
import os
import shutil
import socket
import threading
import time
from typing import Optional, Tuple

from tft_allennlp.archives.encoder_export import export_encoder
from tft_allennlp.common.transformer_source import ARCHIVED_TRANSFORMERS
from tft_experiments.attempt_log import record_attempt
from tft_experiments.locks import unmark_failed
from tft_experiments.machine import slot_environment, usable_cpus, visible_gpus
from tft_experiments.outcomes import (
    encoder_fingerprint,
    is_finished,
    read_fingerprint,
    tuned_choices,
)
from tft_experiments.reuse import (
    mark_not_taken,
    rendered_config,
    reuse_run,
    take_injection_record,
)
from tft_experiments.runs import GlueRun, InjectionRun, Run, Training, grid_of
from tft_experiments.spec import ExperimentSpec
from tft_experiments.table import append_row, row_from_directory, table_path
from tft_experiments.tracking import GridTracking, log_finished_run
from tft_experiments.training import RunStopped, allennlp_train, resumable

logger = logging.getLogger(__name__)


class RunAttempts:
    """
    Attempts the runs of `spec` that the runner starts, each in a job slot.

    # Parameters

    spec : `ExperimentSpec`
    jobs : `int`
        Job slots running at once (each gets its share of the CPUs, and a GPU where several
        are visible).
    shard : `Tuple[int, int]`
        The runner's shard `(i, n)`, recorded with each attempt.
    stopping : `threading.Event`
        Set when the grid stops: no run is retried then.
    tracking : `GridTracking`, optional (default = `None`)
        The MLflow store and experiment each run finished here is logged to (`tracking.py`).
    """

    def __init__(
        self,
        spec: ExperimentSpec,
        jobs: int,
        shard: Tuple[int, int],
        stopping: threading.Event,
        tracking: Optional[GridTracking] = None,
    ) -> None:
        self.spec = spec
        self.tracking = tracking
        self.jobs = jobs
        self.shard = shard
        self._stopping = stopping
        self._cpus = usable_cpus()
        self._gpus = visible_gpus()

    def attempt(self, run: Run, slot: int) -> Optional[bool]:
        """
        Runs `run` in job slot `slot` (retrying) or takes it from another grid; True: done;
        None: to be planned again (an injection whose record alone was taken, a fine-tuning
        planned to be taken that was not: it waits for its injection).
        """
        unmark_failed(run.directory)
        training = self._training(run, slot)
        # The encoder the grid's finished fine-tunings of this injection used, if it says.
        recorded = read_fingerprint(run) if isinstance(run, InjectionRun) else None
        started = time.time()
        config = rendered_config(*training)
        if reuse_run(self.spec, run, config, recorded):
            self._record(run, started, "reused")
            return True
        if isinstance(run, InjectionRun):
            if recorded is None and take_injection_record(self.spec, run, config) is not None:
                self._record(run, started, "reused")
                return None
        elif not self._injection_built(run):
            logger.info(
                "%s: not taken from another grid; it waits for its injection", run.directory
            )
            mark_not_taken(run)
            return None
        resume_failed = False
        for attempt in range(1 + self.spec.retries):
            if self._stopping.is_set():
                return False
            if attempt:
                logger.warning("Retrying %s (attempt %d)", run.directory, attempt + 1)
            resume = not resume_failed and resumable(run.directory, training)
            outcome = self._try(run, training, resume, recorded)
            resume_failed = resume and outcome not in ("done", "killed")
            if outcome not in ("failed", "killed"):
                return outcome == "done"
        return False

    def _injection_built(self, run: Run) -> bool:
        """Whether the injected encoder that `run` fine-tunes, if any, is on disk."""
        injection = self.spec.injection_of(run) if isinstance(run, GlueRun) else None
        return injection is None or is_finished(injection)

    def _try(self, run: Run, training: Training, resume: bool, recorded: Optional[str]) -> str:
        """
        One attempt: "done"; "failed"; "killed" (by SIGKILL, recorded as failed); or "final"
        for an injection that exported another encoder than the one it `recorded` (another
        attempt would not make that one).
        """
        started = time.time()
        if resume:
            logger.info("Resuming %s from its last checkpoint", run.directory)
        else:
            logger.info("Starting %s", run.directory)
        try:
            outcome = self._execute(run, training, resume)
        except RunStopped:
            self._record(run, started, "stopped")
            raise
        succeeded = outcome == "done"
        exported = None
        if succeeded and isinstance(run, InjectionRun):
            exported = self._same_encoder(run, recorded)
        other_encoder = succeeded and isinstance(run, InjectionRun) and exported is None
        succeeded = succeeded and not other_encoder
        ended = time.time()
        self._record(run, started, "done" if succeeded else "failed")
        if other_encoder:
            return "final"
        if succeeded:
            if isinstance(run, GlueRun) and not self.spec.keep_weights:
                _delete_weights(run.directory)
            self._add_row(run, started, ended, exported)
            logger.info("Finished %s in %.0f s", run.directory, ended - started)
            if self.tracking is not None:
                self._track(run)
        return "done" if succeeded else outcome

    def _track(self, run: Run) -> None:
        """Logs `run` to MLflow; a failure is a warning (the grid's table has the run)."""
        assert self.tracking is not None
        try:
            run_id = log_finished_run(self.tracking, run)
        except Exception as error:
            logger.warning("MLflow: %s was not logged: %s", run.directory, error, exc_info=True)
        else:
            logger.info("MLflow run %s: %s", run_id, run.directory)

    def _add_row(self, run: Run, started: float, ended: float, exported: Optional[str]) -> None:
        """Appends the row of `run`, just finished here, to the grid's table."""
        grid, relative = grid_of(run)
        row = row_from_directory(
            grid,
            relative,
            encoder_sha256=exported,
            started=round(started, 1),
            ended=round(ended, 1),
        )
        if row is None:  # metrics.json gone since allennlp wrote it
            raise FileNotFoundError(f"{run.directory}: finished without its metrics.json")
        append_row(grid, row)

    def _training(self, run: Run, slot: int) -> Training:
        """
        What `run` trains (a generated config is written first), with the CPU threads and GPU
        of job slot `slot` added to its environment (nothing for a single job).
        """
        config, overrides, environment = run.training()
        environment.update(slot_environment(slot, self.jobs, self._cpus, self._gpus))
        if isinstance(run, GlueRun) and run.config_text is not None:
            os.makedirs(os.path.dirname(config), exist_ok=True)
            draft = f"{config}.{socket.gethostname()}.{os.getpid()}.tmp"
            with open(draft, "w") as handle:
                handle.write(run.config_text)
            os.replace(draft, config)
        return config, overrides, environment

    def _execute(self, run: Run, training: Training, resume: bool) -> str:
        """
        Trains `run` as `_training` says, with `resume` on from its checkpoint (an injection:
        then exports its encoder); `allennlp_train`'s outcome.
        """
        config, overrides, environment = training
        outcome = allennlp_train(config, run.directory, overrides, environment, resume)
        if outcome == "done" and isinstance(run, InjectionRun):
            export_encoder(os.path.join(run.directory, "model.tar.gz"), run.encoder)
        return outcome

    def _same_encoder(self, run: InjectionRun, recorded: Optional[str]) -> Optional[str]:
        """
        The fingerprint of the encoder the injection `run` just exported, for its row, unless
        its row recorded another one before (`recorded`) that a finished fine-tuning of the grid
        used (trained here or taken from another grid). Then the new encoder is deleted (so that
        nothing fine-tunes it beside those), the old row kept, and None returned.

        A recorded encoder that none of the grid's finished fine-tunings used (a record taken
        alone from another grid) is replaced by the new one, with a warning: training is
        reproducible bit for bit on one machine, not across CPUs whose vector instructions
        differ, so a rebuild on another machine exports other weights.
        """
        fingerprint = encoder_fingerprint(run.encoder)
        if recorded is None or fingerprint == recorded or not self._fine_tuned(run):
            if recorded is not None and recorded != fingerprint:
                logger.warning(
                    "%s: its encoder, exported again, is not the one it recorded (SHA-256 %s, "
                    "now %s; a build on another machine?). No finished fine-tuning of this grid "
                    "used that one, so the new one is kept and recorded; fine-tunings of it are "
                    "no longer taken from grids that recorded the old one.",
                    run.directory,
                    recorded[:12],
                    fingerprint[:12],
                )
            return fingerprint
        shutil.rmtree(run.encoder)
        logger.error(
            "%s: its encoder, exported again, is not the one it recorded (SHA-256 %s, now "
            "%s), which its finished fine-tunings used; the new one was deleted. To "
            "fine-tune a new build, delete the lines of it and of those fine-tunings from %s "
            "and their directories.",
            run.directory,
            recorded[:12],
            fingerprint[:12],
            table_path(self.spec.output_dir),
        )
        return None

    def _fine_tuned(self, injection: InjectionRun) -> bool:
        """Whether a fine-tuning of the grid that fine-tunes `injection`'s encoder has finished."""
        return any(
            is_finished(glue_run)
            for glue_run in self.spec.glue_runs(tuned_choices(self.spec))
            if self.spec.injection_of(glue_run) == injection
        )

    def _record(self, run: Run, started: float, outcome: str) -> None:
        """Appends the attempt to the experiment's `attempts.jsonl` (one short line)."""
        record_attempt(self.spec.output_dir, run, self.shard, started, outcome)


def _delete_weights(directory: str) -> None:
    """A finished fine-tuning's weights (`*.th`, `model.tar.gz`); its records stay."""
    for path in glob.glob(os.path.join(directory, "*.th")):
        os.remove(path)
    os.remove(os.path.join(directory, "model.tar.gz"))
    # The archive's copy of the base's files (docs/archives.md).
    shutil.rmtree(os.path.join(directory, ARCHIVED_TRANSFORMERS), ignore_errors=True)
