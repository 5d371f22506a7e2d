"""
Runs an experiment grid resumably, in parallel and across machines: the scheduling loop.

Each run is attempted in a job slot (`attempts.py`: reused from another grid, or trained, and
retried), which appends its row to the grid's table of finished runs (`table.py`) when it
finishes. A run with a row is finished and skipped, its directory on disk or not (a fresh
machine, with the grid's files from git); an unfinished one is run again, up to `retries` more
times, and then reported as failed. A multitask run reported for several tasks runs once.

Order and dependencies (`plan.py`): injections, then the recipe sweep on the base models, then
the reported grid seed by seed. A fine-tuning of an injected encoder waits for its injection; a
run of the tuned recipe waits for the sweep that chooses it. An injection is run only while a
fine-tuning of its encoder is left to train: on a machine without the encoders (they are not kept
in git), a grid whose fine-tunings have all finished trains nothing again, nor does one whose
unfinished fine-tunings another grid of `reuse_from` finished with the encoder it recorded (it
takes the injection's record from there first, `reuse.take_injection_record`). An injection run
again must export the encoder it recorded (`attempts.py`), nor is it taken from another grid that
recorded another encoder.

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

Every attempt is logged in `attempts.jsonl` (`attempt_log.py`).

A SIGTERM or Ctrl-C (to this process, or to a run) stops the grid: each run in training saves a
checkpoint at its batch and stops (`training.RunStopped`), nothing is retried or started, and
the next invocation resumes those runs.
"""

import concurrent.futures
import enum
import logging
import os
import threading
import time
import zlib
from typing import Dict, List, Optional, Set, Tuple

from tft_experiments.attempt_log import record_lost
from tft_experiments.attempts import RunAttempts
from tft_experiments.locks import RunLock, failed_since, mark_failed
from tft_experiments.outcomes import is_finished
from tft_experiments.plan import Planned, Step, TunedPlaceholder, grid_plan
from tft_experiments.reuse import in_grid
from tft_experiments.runs import InjectionRun, Run
from tft_experiments.spec import ExperimentSpec
from tft_experiments.table import adopt_finished_runs
from tft_experiments.tracking import GridTracking
from tft_experiments.training import LOG, stop_running

logger = logging.getLogger(__name__)


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
    tracking : `GridTracking`, optional (default = `None`)
        The MLflow store and experiment that each run finished here is logged to.

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
        tracking: Optional[GridTracking] = None,
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
        # Each running attempt: its run, its job slot and its lock.
        self._running: Dict[concurrent.futures.Future, Tuple[Run, int, RunLock]] = {}
        # The injections that the last plan found needed by no fine-tuning left to train.
        self._unneeded: Set[str] = set()
        self._stopping = threading.Event()
        self._attempts = RunAttempts(spec, jobs, shard, self._stopping, tracking)
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
            record_lost(self.spec.output_dir, run, lock.taken_over)
        slot = self._free_slots()[0]
        self._running[pool.submit(self._attempts.attempt, run, slot)] = (run, slot, lock)
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
