"""
Runs an experiment grid resumably, in parallel and across machines.

Every injection and every GLUE fine-tuning is an ordinary `allennlp train` of the project's configs
(with overrides, never copies) in a child process, with its config, metrics and log in its own
directory. A strategy other than the cross-encoder trains a one-call jsonnet generated under
`OUTPUT_DIR/configs/` that calls a function of the project's `training_configs/common/` (see
`strategies/`); a multitask run reported for several tasks runs once. A run that finishes appends
its row to the grid's table of finished runs (`runs.jsonl`, `table.py`: its config fingerprint,
metrics, times, parameter counts, an injection's encoder fingerprint). A run with a row is finished
and skipped, its directory on disk or not (a fresh machine, with the grid's files from git); an
unfinished one is run again, up to `retries` more times, and then reported as failed. An attempt
that was killed (a crash, or the machine or the harness going away) resumes from the last checkpoint
its directory holds when that run's config is this one (`resumable`: `allennlp train --recover`,
which the project's configs make end as an uninterrupted run would, bit for bit); anything else, and
an attempt after a resumption that failed, starts from scratch. A resumption that SIGKILL ended (an
out-of-memory killer) did not fail by itself: the attempt after it resumes again.

Order and dependencies (`plan.py`): injections, then the recipe sweep on the base models, then
the reported grid seed by seed. A fine-tuning of an injected encoder waits for its injection; a
run of the tuned recipe waits for the sweep that chooses it. An injection is run only while a
fine-tuning of its encoder is left to train: on a machine without the encoders (they are not kept
in git), a grid whose fine-tunings have all finished trains nothing again, nor does one whose
unfinished fine-tunings another grid of `reuse_from` finished with the encoder it recorded (it
takes the injection's record from there first, `reuse.take_injection_record`). An injection
records the fingerprint of the encoder it exported (its row's `encoder_sha256`, which stays while
it runs again); one run again must export that very encoder when a finished fine-tuning of the
grid used it, or it fails (and its new encoder is deleted, its row kept) rather than let the grid
fine-tune two different encoders under one name; nor is it taken from another grid that recorded
another encoder. A record that no finished fine-tuning used (taken alone from
another grid) gives way to the new encoder: a rebuild on another CPU exports other weights.

Parallel and distributed execution:

- `jobs` runs at once in this process, each with `cpus / jobs` CPU threads and, where several
  GPUs are visible, a GPU of its own;
- `shard = (i, n)`: this process owns the runs whose directory (relative to the output
  directory) hashes to `i` modulo `n`, so `n` processes on as many machines, sharing the output
  directory, together run the grid once; each waits for the injections and sweep runs it needs
  from other shards (or, with `wait=False`, says which and leaves those runs);
- `injections=False`: this process leaves every injection to other processes and fine-tunes
  (or waits, as for another shard's) what they inject, so that several processes of one
  machine share its memory with one injection at a time (an injection on a large corpus peaks
  far above any fine-tuning of its encoder);
- a run is claimed (`locks.py`) with a lock file `DIRECTORY.lock` created exclusively, holding
  the host and process id, so that two processes never run it at once; a lock left by a dead
  process on the same host is taken over. A run that failed for good leaves `DIRECTORY.failed`
  so that the shards waiting for it stop waiting.

A run that another grid of the spec's `reuse_from` finished with the same config is taken from
there instead (`reuse.py`); one that a process is training there now is waited for (or, without
`wait`, left), not trained twice.

Every attempt is appended to `attempts.jsonl` in the output directory (directory, host, pid,
start and end times, outcome: "done", "failed", "reused" or "stopped"; or "lost", an attempt
whose process died holding the run, which the process that takes the run over records, from
the claim to the run's last output; and the kind of CPU it ran on, None for a lost one).

A SIGTERM or Ctrl-C (to this process, or to a run) stops the grid: each run in training saves a
checkpoint at its batch and stops (`training.RunStopped`), nothing is retried or started, and
the next invocation resumes those runs.
"""

import concurrent.futures
import enum
import glob
import json
import logging
import os
import shutil
import socket
import threading
import time
import zlib
from typing import Any, Dict, List, Optional, Set, Tuple

from tft_allennlp.archives.encoder_export import export_encoder
from tft_allennlp.common.transformer_source import ARCHIVED_TRANSFORMERS
from tft_experiments.locks import RunLock, failed_since, mark_failed, unmark_failed
from tft_experiments.outcomes import (
    encoder_fingerprint,
    is_finished,
    read_fingerprint,
    tuned_choices,
)
from tft_experiments.plan import Planned, Step, TunedPlaceholder, grid_plan
from tft_experiments.reuse import (
    in_grid,
    mark_not_taken,
    rendered_config,
    reuse_run,
    take_injection_record,
)
from tft_experiments.runs import GlueRun, InjectionRun, Run, Training, grid_of
from tft_experiments.spec import ExperimentSpec
from tft_experiments.table import (
    adopt_finished_runs,
    append_row,
    row_from_directory,
    table_path,
)
from tft_experiments.training import (
    LOG,
    RunStopped,
    allennlp_train,
    resumable,
    stop_running,
)

logger = logging.getLogger(__name__)

ATTEMPTS = "attempts.jsonl"


class Status(enum.StrEnum):
    """What became of a run in this process."""

    SKIPPED = "skipped"
    """Finished before, or an injection that no fine-tuning left to run needs."""
    DONE = "done"
    FAILED = "failed"
    WAITING = "waiting"
    """Left, without waiting, for a run of another process."""


def parse_shard(text: str) -> Tuple[int, int]:
    """`"i/n"` (0 <= i < n) -> (i, n)."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard takes i/n, e.g. 0/4, not {text!r}") from None
    if not 0 <= index < count:
        raise ValueError(f"--shard {text}: i must be in [0, n).")
    return index, count


class ExperimentRunner:
    """
    Runs this process's share of `spec`, skipping finished runs.

    # Parameters

    spec : `ExperimentSpec`
    jobs : `int`, optional (default = `1`)
        Runs at once.
    shard : `Tuple[int, int]`, optional (default = `(0, 1)`)
        `(i, n)`: run the runs of shard `i` of `n`.
    wait : `bool`, optional (default = `True`)
        Wait for the runs of other shards (or of other processes) that this shard's runs need;
        if `False`, leave the runs that would wait, and report them as "waiting".
    poll_seconds : `float`, optional (default = `30`)
        How often to look for the runs of other processes while waiting.
    injections : `bool`, optional (default = `True`)
        If `False`, start no injection: leave each to other processes, like a run of another
        shard (waited for, or without `wait` left).

    `run()` returns each run directory's `Status` in this process.
    """

    def __init__(
        self,
        spec: ExperimentSpec,
        jobs: int = 1,
        shard: Tuple[int, int] = (0, 1),
        wait: bool = True,
        poll_seconds: float = 30.0,
        injections: bool = True,
    ) -> None:
        if jobs < 1:
            raise ValueError("jobs must be at least 1.")
        self.spec = spec
        self.jobs = jobs
        self.shard = shard
        self.wait = wait
        self.poll_seconds = poll_seconds
        self.injections = injections
        self.statuses: Dict[str, Status] = {}
        self._cpus = len(os.sched_getaffinity(0))
        self._gpus = _visible_gpus()
        # Each running attempt: its run, its job slot and its lock.
        self._running: Dict[concurrent.futures.Future, Tuple[Run, int, RunLock]] = {}
        # The injections that the last plan found needed by no fine-tuning left to train.
        self._unneeded: Set[str] = set()
        self._stopping = threading.Event()
        self._started = 0.0

    def owns(self, run: Planned) -> bool:
        """Whether this shard runs `run`: a stable hash of its directory within the experiment."""
        relative = os.path.relpath(run.directory, self.spec.output_dir)
        return zlib.crc32(relative.encode("utf-8")) % self.shard[1] == self.shard[0]

    def run(self) -> Dict[str, Status]:
        """
        Starts every run that can start, as job slots free up, until none is left; runs that
        wait for other processes' runs are waited for (or, without `wait`, left).
        """
        self._started = time.time()
        # Runs finished without a row (by a harness before tables) are written to the table
        # first: their records must outlive their directories, which a rerun empties.
        adopt_finished_runs(self.spec.output_dir)
        with concurrent.futures.ThreadPoolExecutor(self.jobs) as pool:
            try:
                while self._step(pool):
                    pass
            except BaseException:
                # A Ctrl-C or SIGTERM, here or to a run (`RunStopped`): no run starts or is
                # retried, and each running one saves a checkpoint and stops; then their claims
                # are given up.
                self._stopping.set()
                stop_running()
                pool.shutdown(wait=True)
                for _, _, lock in self._running.values():
                    lock.release()
                raise
        return self.statuses

    def _step(self, pool: concurrent.futures.Executor) -> bool:
        """
        Starts what can start, then waits for a running attempt to end or, with none running,
        for other processes' runs; False once nothing is left to run or to wait for.
        """
        waiting = self._start_what_can_start(pool)
        if self._running:
            self._collect_finished()
            return True
        return bool(waiting) and self._wait_for_others(waiting)

    def _start_what_can_start(self, pool: concurrent.futures.Executor) -> Dict[str, str]:
        """
        Goes through this shard's plan once: settles the runs whose fate is known, starts the
        ready ones while job slots are free; returns the runs left waiting for other processes'
        runs (run directory -> that run's directory).
        """
        waiting: Dict[str, str] = {}
        steps, unneeded = self._plan()
        # An injection settled as needed by none may be needed now: a sweep chose a recipe that
        # no other grid fine-tuned, or a fine-tuning planned to be taken was not.
        for directory in self._unneeded - unneeded:
            if self.statuses.get(directory) == Status.SKIPPED:
                del self.statuses[directory]
        self._unneeded = unneeded
        for run, blocker in steps:
            if run.directory in self.statuses or run.directory in self._busy():
                continue
            if blocker is not None:
                self._wait_or_fail(run, blocker, waiting)
                continue
            assert not isinstance(run, TunedPlaceholder)  # a placeholder always waits
            status = self._settled(run, run.directory in unneeded)
            if status is not None:
                self.statuses[run.directory] = status
            elif not self.injections and isinstance(run, InjectionRun):
                waiting[run.directory] = run.directory  # left to other processes
            elif self._free_slots():
                elsewhere = self._in_training_elsewhere(run)
                if elsewhere is not None:
                    waiting[run.directory] = elsewhere
                elif not self._start(pool, run):
                    waiting[run.directory] = run.directory  # another process runs it
        return waiting

    def _in_training_elsewhere(self, run: Run) -> Optional[str]:
        """
        The directory of `run` in a grid of `reuse_from` that a process is training now, if
        any: this grid takes it from there once it is finished, instead of training it twice.
        """
        for grid in self.spec.reuse_from:
            theirs = in_grid(run, self.spec.output_dir, grid)
            if RunLock(theirs.directory).held():
                return theirs.directory
        return None

    def _plan(self) -> Tuple[List[Step], Set[str]]:
        """This shard's steps of the plan (placeholders belong to every shard)."""
        steps, unneeded = grid_plan(self.spec)
        mine = [
            (run, blocker)
            for run, blocker in steps
            if isinstance(run, TunedPlaceholder) or self.owns(run)
        ]
        return mine, unneeded

    def _busy(self) -> Set[str]:
        return {run.directory for run, _, _ in self._running.values()}

    def _free_slots(self) -> List[int]:
        return sorted(set(range(self.jobs)) - {slot for _, slot, _ in self._running.values()})

    def _wait_or_fail(self, run: Planned, blocker: Run, waiting: Dict[str, str]) -> None:
        """`run` waits for `blocker`, unless that failed (then so does `run`)."""
        if blocker.directory in self._busy():
            return  # its own injection or sweep run is running here
        if self._blocker_failed(blocker):
            self._fail(run, f"{blocker.directory} failed")
        else:
            waiting[run.directory] = blocker.directory

    def _settled(self, run: Run, unneeded: bool) -> Optional[Status]:
        """The status of a run that is not to be started, or None."""
        if is_finished(run):
            return Status.SKIPPED
        if unneeded:
            logger.info(
                "Not running %s: no fine-tuning of its encoder is left to train", run.directory
            )
            return Status.SKIPPED
        if failed_since(run.directory, self._started):
            # Another process gave up on it during this run: not tried again here.
            return Status.FAILED
        return None

    def _start(self, pool: concurrent.futures.Executor, run: Run) -> bool:
        """Claims `run` and starts it in a free job slot; False if another process has it."""
        lock = RunLock(run.directory)
        if not lock.acquire():
            return False
        if lock.taken_over is not None:
            self._record_lost(run, lock.taken_over)
        slot = self._free_slots()[0]
        self._running[pool.submit(self._attempt, run, slot)] = (run, slot, lock)
        return True

    def _collect_finished(self) -> None:
        """Waits a while for running attempts, and records those that ended."""
        done, _ = concurrent.futures.wait(
            self._running,
            timeout=self.poll_seconds,
            return_when=concurrent.futures.FIRST_COMPLETED,
        )
        for future in done:
            run, _, lock = self._running.pop(future)
            try:
                succeeded = future.result()
            finally:
                lock.release()
            if succeeded is None:
                continue  # planned again
            if succeeded:
                self.statuses[run.directory] = Status.DONE
            else:
                self._fail(run, "see its log")

    def _wait_for_others(self, waiting: Dict[str, str]) -> bool:
        """
        With `wait`, sleeps a while and returns True (look again); without, marks the runs of
        `waiting` "waiting" and returns False.
        """
        described = ", ".join(sorted(set(waiting.values())))
        if self.wait:
            logger.info("Waiting for other processes' runs: %s", described)
            time.sleep(self.poll_seconds)
            return True
        for directory in waiting:
            self.statuses[directory] = Status.WAITING
        logger.warning(
            "Left %d runs that wait for other processes' runs: %s", len(waiting), described
        )
        return False

    def _blocker_failed(self, blocker: Run) -> bool:
        """
        Whether a run that others wait for has failed: here (for this shard's own runs, which
        this process retries however they ended before), or in the process that owns it.
        """
        if self.owns(blocker):
            return self.statuses.get(blocker.directory) == Status.FAILED
        return failed_since(blocker.directory, 0.0)

    def _fail(self, run: Planned, reason: str) -> None:
        self.statuses[run.directory] = Status.FAILED
        if isinstance(run, TunedPlaceholder):
            logger.error(
                "%s: the recipe sweep did not finish (%s), so its tuned runs were not started.",
                run.directory,
                reason,
            )
            return
        # A run that failed before allennlp created its directory keeps the log beside it.
        logs = [
            path
            for path in (os.path.join(run.directory, LOG), run.directory + ".log")
            if os.path.exists(path)
        ]
        logger.error(
            "Failed: %s (%s%s)", run.directory, reason, f"; log: {logs[0]}" if logs else ""
        )
        mark_failed(run.directory, reason, logs[0] if logs else None)

    def _attempt(self, run: Run, slot: int) -> Optional[bool]:
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
        return "done" if succeeded else outcome

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
        if self.jobs > 1:
            threads = str(max(1, self._cpus // self.jobs))
            environment.update(OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
            if len(self._gpus) > 1:
                environment["CUDA_VISIBLE_DEVICES"] = self._gpus[slot % len(self._gpus)]
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
        shard = "/".join(map(str, self.shard))
        self._append(
            run, socket.gethostname(), os.getpid(), shard, started, time.time(), outcome, cpu_kind()
        )

    def _record_lost(self, run: Run, claim: Dict[str, Any]) -> None:
        """
        The attempt of a process that died holding `run` (a machine that went away, a SIGKILL):
        from its `claim` to the last output of the run (its log, or the `out.log` of its
        directory). Its shard is unknown.
        """
        outputs = (run.directory.rstrip("/") + ".log", os.path.join(run.directory, "out.log"))
        times = [os.path.getmtime(path) for path in outputs if os.path.exists(path)]
        ended = max([t for t in times if t >= claim["claimed"]], default=claim["claimed"])
        self._append(run, claim["host"], claim["pid"], None, claim["claimed"], ended, "lost")

    def _append(
        self,
        run: Run,
        host: str,
        pid: int,
        shard: Optional[str],
        started: float,
        ended: float,
        outcome: str,
        cpu: Optional[str] = None,
    ) -> None:
        record = {
            "directory": os.path.relpath(run.directory, self.spec.output_dir),
            "host": host,
            "pid": pid,
            "shard": shard,
            "started": round(started, 1),
            "ended": round(ended, 1),
            "outcome": outcome,
            "cpu": cpu,
        }
        with open(os.path.join(self.spec.output_dir, ATTEMPTS), "a") as out:
            out.write(json.dumps(record) + "\n")


def cpu_kind() -> Optional[str]:
    """
    This machine's kind of CPU as Linux names it (`/proc/cpuinfo`: vendor, family, model), e.g.
    "GenuineIntel 6/207"; None elsewhere. Training reproduces bit for bit on one kind only, and
    every machine of a cloud may share one host name.
    """
    try:
        with open("/proc/cpuinfo") as handle:
            fields = dict(
                (key.strip(), value.strip())
                for key, _, value in (line.partition(":") for line in handle)
                if key.strip() in ("vendor_id", "cpu family", "model")
            )
    except OSError:
        return None
    if len(fields) < 3:
        return None
    return f"{fields['vendor_id']} {fields['cpu family']}/{fields['model']}"


def _delete_weights(directory: str) -> None:
    """A finished fine-tuning's weights (`*.th`, `model.tar.gz`); its records stay."""
    for path in glob.glob(os.path.join(directory, "*.th")):
        os.remove(path)
    os.remove(os.path.join(directory, "model.tar.gz"))
    # The archive's copy of the base's files (docs/archives.md).
    shutil.rmtree(os.path.join(directory, ARCHIVED_TRANSFORMERS), ignore_errors=True)


def _visible_gpus() -> List[str]:
    """The ids of the GPUs this process may use (`CUDA_VISIBLE_DEVICES`, or all of them)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [gpu for gpu in visible.split(",") if gpu.strip()]
    try:
        import torch

        return [str(index) for index in range(torch.cuda.device_count())]
    except Exception:  # no usable CUDA
        return []
