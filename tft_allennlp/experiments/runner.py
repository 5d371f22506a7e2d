"""
Runs an experiment grid resumably, in parallel and across machines.

Every injection and every GLUE fine-tuning is an ordinary `allennlp train` of the project's
configs (with overrides, never copies) in a child process, with its config, metrics and log in
its own directory. Siamese and multitask strategies train a few-line jsonnet generated under
`OUTPUT_DIR/configs/` that calls the project's `common/siamese.libsonnet` or
`common/multitask.libsonnet` (see `spec.py`); a multitask run reported for several tasks runs
once. A run whose `metrics.json` exists is finished and skipped; an unfinished one
is run again, up to `retries` more times, and then reported as failed. An attempt that was
killed (a crash, or the machine or the harness going away) resumes from the last checkpoint its
directory holds when that run's config is this one (`resumable`: `allennlp train --recover`,
which the project's configs make end as an uninterrupted run would, bit for bit); anything else,
and an attempt after a resumption that failed, starts from scratch.

Order and dependencies: injections, then the recipe sweep on the base models, then the reported
grid seed by seed. A fine-tuning of an injected encoder waits for its injection; a run of the
tuned recipe waits for the sweep that chooses it. An injection is run only while a fine-tuning
of its encoder is left to run: on a machine without the encoders (they are not kept in git), a
grid whose fine-tunings have all finished trains nothing again. An injection records the
fingerprint of the encoder it exported (`encoder_fingerprint.json`, kept in git, and beside the
directory while it runs again); one run again must export that very encoder, or it fails (and
its new encoder is deleted) rather than let the grid fine-tune two different encoders under one
name; nor is it taken from another grid that recorded another encoder.

Parallel and distributed execution:

- `jobs` runs at once in this process, each with `cpus / jobs` CPU threads and, where several
  GPUs are visible, a GPU of its own;
- `shard = (i, n)`: this process owns the runs whose directory (relative to the output
  directory) hashes to `i` modulo `n`, so `n` processes on as many machines, sharing the output
  directory, together run the grid once; each waits for the injections and sweep runs it needs
  from other shards (or, with `wait=False`, says which and leaves those runs);
- a run is claimed with a lock file `DIRECTORY.lock` created exclusively, holding the host and
  process id, so that two processes never run it at once; a lock left by a dead process on the
  same host is taken over. A run that failed for good leaves `DIRECTORY.failed` so that the
  shards waiting for it stop waiting.

A run that another grid of the spec's `reuse_from` finished with the same config is taken from
there instead (`reuse.py`).

Every attempt is appended to `attempts.jsonl` in the output directory (directory, host, pid,
start and end times, outcome: "done", "failed" or "reused").
"""

import concurrent.futures
import glob
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
import zlib
from typing import IO, Any, Dict, List, Optional, Sequence, Set, Tuple

from tft_allennlp.commands.export import export_encoder
from tft_allennlp.common.transformer_source import ARCHIVED_TRANSFORMERS
from tft_allennlp.experiments.outcomes import (
    FINGERPRINT,
    Run,
    encoder_fingerprint,
    is_finished,
    kept_fingerprint,
    read_fingerprint,
    tuned_choice,
)
from tft_allennlp.experiments.reuse import (
    copy_run,
    find_reusable,
    grids_with_same_encoder,
    in_grid,
    rendered_config,
)
from tft_allennlp.experiments.spec import (
    ExperimentSpec,
    GlueRun,
    InjectionRun,
    TunedKey,
    size_name,
    wrapped_overrides,
)

logger = logging.getLogger(__name__)

# What a run trains: its config file, its overrides, the environment of its `allennlp train`.
Training = Tuple[str, Dict[str, Any], Dict[str, str]]

LOG = "train.log"
ATTEMPTS = "attempts.jsonl"


def seed_overrides(seed: int) -> Dict[str, int]:
    return {"random_seed": seed, "numpy_seed": seed, "pytorch_seed": seed}


def multitask_overrides(overrides: Dict[str, Any], tasks: Sequence[str]) -> Dict[str, Any]:
    """
    A single-task run's overrides for a multitask config: a reader's keys go to every task's
    reader (`dataset_reader.train_size` -> `dataset_reader.readers.<task>.train_size`), a
    loader's batch size to its scheduler; the other keys are kept.
    """
    translated: Dict[str, Any] = {}
    for key, value in overrides.items():
        section, _, rest = key.partition(".")
        if section in ("dataset_reader", "validation_dataset_reader") and rest:
            for task in tasks:
                translated[f"{section}.readers.{task}.{rest}"] = value
        elif section in ("data_loader", "validation_data_loader") and rest == "batch_size":
            translated[f"{section}.scheduler.batch_size"] = value
        else:
            translated[key] = value
    return translated


def resumable(directory: str, training: Training) -> bool:
    """
    Whether the run directory `directory` holds a checkpoint (`training_state_e*.th`) of a
    training whose `config.json` is the one `training` writes now: an attempt that was killed
    before it finished, which `--recover` continues.
    """
    config_path = os.path.join(directory, "config.json")
    if not glob.glob(os.path.join(directory, "training_state_e*.th")):
        return False
    if not os.path.exists(config_path):
        return False
    with open(config_path) as handle:
        written = json.load(handle)
    return written == json.loads(json.dumps(rendered_config(*training)))


def allennlp_train(
    config: str,
    directory: str,
    overrides: Dict[str, Any],
    environment: Dict[str, str],
    resume: bool = False,
) -> bool:
    """
    `allennlp train CONFIG -s DIRECTORY -f -o OVERRIDES` in a child process (with `resume`,
    `--recover` instead of `-f`: on from the checkpoint in DIRECTORY), its output in
    `DIRECTORY.log` while it runs and moved to `DIRECTORY/train.log` after (a resumed run's
    after the log of the attempts before it); True on success.
    """
    log_path = directory.rstrip("/") + ".log"
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    moved = os.path.join(directory, LOG)
    if resume and os.path.exists(moved):
        # The earlier attempts' log goes first (an attempt whose harness was killed left its
        # log beside the directory).
        with open(moved) as earlier:
            text = earlier.read()
        if os.path.exists(log_path):
            with open(log_path) as later:
                text += later.read()
        with open(log_path, "w") as log:
            log.write(text)
        os.remove(moved)
    start = "--recover" if resume else "-f"
    arguments = ["train", config, "-s", directory, start, "--file-friendly-logging"]
    arguments += ["-o", json.dumps(overrides), "--include-package", "tft_allennlp"]
    with open(log_path, "a" if resume else "w") as log:
        returncode = run_allennlp(arguments, log, environment)
    if os.path.isdir(directory):
        os.replace(log_path, os.path.join(directory, LOG))
    return returncode == 0 and os.path.exists(os.path.join(directory, "metrics.json"))


def run_allennlp(arguments: List[str], log: IO[str], environment: Dict[str, str]) -> int:
    """
    `allennlp ARGUMENTS` in a new interpreter, with `environment` added to this process's, its
    output and errors written to `log`; the exit code. Every run gets a fresh process, so that
    no state (a loaded model, a CUDA context, the registry of a config's `--include-package`)
    carries over from one run to the next.
    """
    command = [sys.executable, "-m", "allennlp", *arguments]
    return subprocess.run(
        command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **environment}
    ).returncode


def parse_shard(text: str) -> Tuple[int, int]:
    """`"i/n"` (0 <= i < n) -> (i, n)."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard takes i/n, e.g. 0/4, not {text!r}") from None
    if not 0 <= index < count:
        raise ValueError(f"--shard {text}: i must be in [0, n).")
    return index, count


class RunLock:
    """An exclusive claim on a run: `DIRECTORY.lock`, created atomically, naming host and pid."""

    def __init__(self, directory: str) -> None:
        self.path = directory.rstrip("/") + ".lock"
        self.owner = {"host": socket.gethostname(), "pid": os.getpid()}

    def acquire(self) -> bool:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        for _ in range(2):
            try:
                handle = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                if not self._stale():
                    return False
                logger.warning("Taking over %s from a process that no longer runs.", self.path)
                try:
                    os.remove(self.path)
                except FileNotFoundError:
                    pass
                continue
            with os.fdopen(handle, "w") as out:
                json.dump(self.owner, out)
            return True
        return False

    def release(self) -> None:
        try:
            os.remove(self.path)
        except FileNotFoundError:
            pass

    def _stale(self) -> bool:
        """A lock of a dead process on this host (another host's locks are never stale here)."""
        try:
            with open(self.path) as handle:
                owner = json.load(handle)
        except (OSError, ValueError):
            return False  # being written right now
        if owner.get("host") != self.owner["host"]:
            return False
        try:
            os.kill(int(owner["pid"]), 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False


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

    `run()` returns each run directory's outcome in this process: "skipped" (finished before, or
    an injection that no fine-tuning left to run needs), "done", "failed", or, without waiting,
    "waiting".
    """

    def __init__(
        self,
        spec: ExperimentSpec,
        jobs: int = 1,
        shard: Tuple[int, int] = (0, 1),
        wait: bool = True,
        poll_seconds: float = 30.0,
    ) -> None:
        if jobs < 1:
            raise ValueError("jobs must be at least 1.")
        self.spec = spec
        self.jobs = jobs
        self.shard = shard
        self.wait = wait
        self.poll_seconds = poll_seconds
        self.statuses: Dict[str, str] = {}
        self._cpus = len(os.sched_getaffinity(0))
        self._gpus = _visible_gpus()

    def owns(self, run: Run) -> bool:
        """Whether this shard runs `run`: a stable hash of its directory within the experiment."""
        relative = os.path.relpath(run.directory, self.spec.output_dir)
        return zlib.crc32(relative.encode("utf-8")) % self.shard[1] == self.shard[0]

    def run(self) -> Dict[str, str]:
        started = time.time()
        running: Dict[concurrent.futures.Future, Tuple[Run, int, RunLock]] = {}
        with concurrent.futures.ThreadPoolExecutor(self.jobs) as pool:
            while True:
                # run directory -> what it waits for (a run of another process)
                waiting: Dict[str, str] = {}
                free_slots = sorted(
                    set(range(self.jobs)) - {slot for _, slot, _ in running.values()}
                )
                busy = {run.directory for run, _, _ in running.values()}
                plan, unneeded = self._plan()
                for run, blocker in plan:
                    if run.directory in self.statuses or run.directory in busy:
                        continue
                    if blocker is not None:
                        if blocker.directory in busy:
                            continue  # its own injection or sweep run is running here
                        if self._blocker_failed(blocker):
                            self._fail(run, f"{blocker.directory} failed")
                        else:
                            waiting[run.directory] = blocker.directory
                        continue
                    if is_finished(run):
                        self.statuses[run.directory] = "skipped"
                        continue
                    if run.directory in unneeded:
                        logger.info(
                            "Not running %s: every fine-tuning of its encoder has finished",
                            run.directory,
                        )
                        self.statuses[run.directory] = "skipped"
                        continue
                    if _failed_since(run, started):
                        # Another process gave up on it during this run: not tried again here.
                        self.statuses[run.directory] = "failed"
                        continue
                    if not free_slots:
                        continue
                    lock = RunLock(run.directory)
                    if not lock.acquire():
                        waiting[run.directory] = run.directory  # another process runs it
                        continue
                    slot = free_slots.pop(0)
                    running[pool.submit(self._attempt, run, slot)] = (run, slot, lock)
                    busy.add(run.directory)
                if not running:
                    if not waiting:
                        break
                    described = ", ".join(sorted(set(waiting.values())))
                    if not self.wait:
                        for directory in waiting:
                            self.statuses[directory] = "waiting"
                        logger.warning(
                            "Left %d runs that wait for other processes' runs: %s",
                            len(waiting),
                            described,
                        )
                        break
                    logger.info("Waiting for other processes' runs: %s", described)
                    time.sleep(self.poll_seconds)
                    continue
                done, _ = concurrent.futures.wait(
                    running,
                    timeout=self.poll_seconds,
                    return_when=concurrent.futures.FIRST_COMPLETED,
                )
                for future in done:
                    run, _, lock = running.pop(future)
                    try:
                        succeeded = future.result()
                    finally:
                        lock.release()
                    if succeeded:
                        self.statuses[run.directory] = "done"
                    else:
                        self._fail(run, "see its log")
        return self.statuses

    def _plan(self) -> Tuple[List[Tuple[Run, Optional[Run]]], Set[str]]:
        """
        This shard's runs in order, each with the unfinished run it must wait for (None when it
        can start), and the injections that no unfinished fine-tuning of any shard waits for,
        nor may (a base whose sweep has not chosen yet needs all its injections). The tuned runs
        of a (base, task, size) appear once its sweep has chosen.
        """
        spec = self.spec
        injections = list(spec.injection_runs())
        plan: List[Tuple[Run, Optional[Run]]] = [(injection, None) for injection in injections]
        for sweep_run in spec.sweep_runs():
            plan.append((sweep_run, None))
        choices = {}
        needed = set()
        for key in spec.tuned_keys():
            choice = tuned_choice(spec, key)
            if choice is not None:
                choices[key] = choice
                continue
            # The tuned runs wait for the first unfinished sweep run of their key.
            pending = next(run for run in spec.sweep_runs_of(key) if not is_finished(run))
            plan.append((_TunedPlaceholder(key, pending.directory), pending))
            needed.update(run.directory for run in injections if run.base == key[0])
        for glue_run in spec.glue_runs(choices):
            injection = spec.injection_of(glue_run)
            blocker = None
            if injection is not None and not is_finished(glue_run):
                needed.add(injection.directory)
                if not is_finished(injection):
                    blocker = injection
            plan.append((glue_run, blocker))
        unneeded = {run.directory for run in injections} - needed
        # A sweep run that is also a grid run appears once; placeholders belong to every shard.
        seen = set()
        owned = []
        for run, blocker in plan:
            if run.directory in seen:
                continue
            seen.add(run.directory)
            if isinstance(run, _TunedPlaceholder) or self.owns(run):
                owned.append((run, blocker))
        return owned, unneeded

    def _blocker_failed(self, blocker: Run) -> bool:
        """
        Whether a run that others wait for has failed: here (for this shard's own runs, which
        this process retries however they ended before), or in the process that owns it.
        """
        if self.owns(blocker):
            return self.statuses.get(blocker.directory) == "failed"
        return _failed_since(blocker, 0.0)

    def _fail(self, run: Run, reason: str) -> None:
        self.statuses[run.directory] = "failed"
        if isinstance(run, _TunedPlaceholder):
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
        os.makedirs(os.path.dirname(run.directory), exist_ok=True)
        with open(run.directory + ".failed", "w") as marker:
            json.dump({"reason": reason, "log": logs[0] if logs else None}, marker)

    def _attempt(self, run: Run, slot: int) -> bool:
        """Runs `run` in job slot `slot` (retrying) or takes it from another grid; True: done."""
        if os.path.exists(run.directory + ".failed"):
            os.remove(run.directory + ".failed")  # a new attempt of a run that failed before
        training = self._training(run, self._environment(slot))
        # The encoder the grid's finished fine-tunings of this injection used, if it says.
        recorded = read_fingerprint(run) if isinstance(run, InjectionRun) else None
        started = time.time()
        if self._reuse(run, training, recorded):
            self._record(run, started, "reused")
            return True
        # Kept beside the directory that the attempt empties, until the attempt has checked it.
        if recorded is not None:
            _write_fingerprint(kept_fingerprint(run), recorded)
        resume_failed = False
        for attempt in range(1 + self.spec.retries):
            if attempt:
                logger.warning("Retrying %s (attempt %d)", run.directory, attempt + 1)
            started = time.time()
            resume = not resume_failed and resumable(run.directory, training)
            if resume:
                logger.info("Resuming %s from its last checkpoint", run.directory)
            else:
                logger.info("Starting %s", run.directory)
            succeeded = self._execute(run, training, resume)
            resume_failed = resume and not succeeded
            other_encoder = (
                succeeded
                and isinstance(run, InjectionRun)
                and not self._same_encoder(run, recorded)
            )
            succeeded = succeeded and not other_encoder
            self._record(run, started, "done" if succeeded else "failed")
            if other_encoder:
                return False  # another attempt would not make the recorded encoder
            if succeeded:
                if isinstance(run, GlueRun) and not self.spec.keep_weights:
                    for path in glob.glob(os.path.join(run.directory, "*.th")):
                        os.remove(path)
                    os.remove(os.path.join(run.directory, "model.tar.gz"))
                    # The archive's copy of the base's files (docs/archives.md).
                    shutil.rmtree(
                        os.path.join(run.directory, ARCHIVED_TRANSFORMERS), ignore_errors=True
                    )
                logger.info("Finished %s in %.0f s", run.directory, time.time() - started)
                return True
        return False

    def _environment(self, slot: int) -> Dict[str, str]:
        """CPU threads and GPU of a job slot (nothing is changed for a single job)."""
        environment: Dict[str, str] = {}
        if self.jobs > 1:
            threads = str(max(1, self._cpus // self.jobs))
            environment.update(OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
            if len(self._gpus) > 1:
                environment["CUDA_VISIBLE_DEVICES"] = self._gpus[slot % len(self._gpus)]
        return environment

    def _training(self, run: Run, environment: Dict[str, str]) -> Training:
        """
        What `run` trains: its config file (a generated one is written first), its overrides and
        the environment its `allennlp train` gets.
        """
        spec = self.spec
        base_model = spec.base_models[run.base]
        if isinstance(run, InjectionRun):
            environment = {
                **environment,
                "TFT_MODEL": base_model,
                "TFT_PARAPHRASE_CORPUS": run.corpus,
            }
            overrides = {**seed_overrides(run.seed), **json.loads(run.overrides)}
            return run.config, overrides, environment
        injection = spec.injection_of(run)
        model = base_model if injection is None else injection.encoder
        environment = {**environment, "TFT_MODEL": model, "GLUE_DIR": spec.glue_dir}
        overrides: Dict[str, Any] = {"dataset_reader.seed": run.seed}
        overrides["dataset_reader.train_size"] = run.train_size
        overrides.update(spec.glue_overrides)
        overrides.update(spec.candidates()[run.candidate])
        overrides.update(wrapped_overrides(run.strategy))
        overrides.update(spec.strategy_overrides.get(run.strategy, {}))
        if run.is_multitask:
            overrides = multitask_overrides(overrides, run.tasks)
        overrides = {**seed_overrides(run.seed), **overrides}
        if run.config_text is not None:
            os.makedirs(os.path.dirname(run.config), exist_ok=True)
            draft = f"{run.config}.{socket.gethostname()}.{os.getpid()}.tmp"
            with open(draft, "w") as handle:
                handle.write(run.config_text)
            os.replace(draft, run.config)
        return run.config, overrides, environment

    def _execute(self, run: Run, training: Training, resume: bool) -> bool:
        """
        Trains `run` as `_training` says, with `resume` on from its checkpoint (an injection:
        then exports its encoder).
        """
        config, overrides, environment = training
        if not allennlp_train(config, run.directory, overrides, environment, resume):
            return False
        if isinstance(run, InjectionRun):
            export_encoder(os.path.join(run.directory, "model.tar.gz"), run.encoder)
        return True

    def _same_encoder(self, run: InjectionRun, recorded: Optional[str]) -> bool:
        """
        Records the fingerprint of the encoder the injection `run` just exported, unless the
        directory recorded another one before (`recorded`): the encoder that the grid's finished
        fine-tunings of it used. Then the new encoder is deleted (so that nothing fine-tunes it
        beside those), the old record kept, and False returned.
        """
        fingerprint = encoder_fingerprint(run.encoder)
        record = os.path.join(run.directory, FINGERPRINT)
        same = recorded is None or fingerprint == recorded
        _write_fingerprint(record, fingerprint if same else recorded)
        if recorded is not None:
            os.remove(kept_fingerprint(run))
        if not same:
            shutil.rmtree(run.encoder)
            logger.error(
                "%s: its encoder, exported again, is not the one it recorded (SHA-256 %s, now "
                "%s), which its finished fine-tunings used; the new one was deleted. To "
                "fine-tune a new build, delete %s and the directories of those fine-tunings.",
                run.directory,
                recorded[:12],
                fingerprint[:12],
                record,
            )
        return same

    def _reuse(self, run: Run, training: Training, recorded: Optional[str]) -> bool:
        """
        Takes `run` from the first grid of `reuse_from` that finished it with the config of
        `training` (`experiments/reuse.py`); False when none did. An injection that `recorded`
        the fingerprint of its encoder is taken only from a grid that recorded the same.
        """
        spec = self.spec
        grids = list(spec.reuse_from)
        injection = spec.injection_of(run) if isinstance(run, GlueRun) else None
        if injection is not None:
            grids = grids_with_same_encoder(injection, spec.output_dir, grids)
        if recorded is not None:
            grids = [
                grid
                for grid in grids
                if read_fingerprint(in_grid(run, spec.output_dir, grid)) == recorded
            ]
        if not grids:
            return False
        relative = os.path.relpath(run.directory, spec.output_dir)
        grid = find_reusable(run, rendered_config(*training), spec.output_dir, grids)
        if grid is None:
            logger.info("%s: no grid of reuse_from finished it with this config", relative)
            return False
        copy_run(grid, relative, spec.output_dir, encoder=isinstance(run, InjectionRun))
        logger.info("Reused %s from %s", relative, grid)
        return True

    def _record(self, run: Run, started: float, outcome: str) -> None:
        """Appends the attempt to the experiment's `attempts.jsonl` (one short line)."""
        record = {
            "directory": os.path.relpath(run.directory, self.spec.output_dir),
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "shard": "/".join(map(str, self.shard)),
            "started": round(started, 1),
            "ended": round(time.time(), 1),
            "outcome": outcome,
        }
        with open(os.path.join(self.spec.output_dir, ATTEMPTS), "a") as out:
            out.write(json.dumps(record) + "\n")


def _write_fingerprint(path: str, fingerprint: str) -> None:
    with open(path, "w") as handle:
        json.dump({"sha256": fingerprint}, handle)
        handle.write("\n")


def _failed_since(run: Run, since: float) -> bool:
    """Whether a process marked `run` failed at or after time `since`."""
    marker = run.directory + ".failed"
    return os.path.exists(marker) and os.path.getmtime(marker) >= since


class _TunedPlaceholder:
    """Stands for the tuned runs of one (base, task, size) until their sweep has finished."""

    def __init__(self, key: TunedKey, sweep_directory: str) -> None:
        base, task, size = key
        self.directory = f"tuned:{base}/{task}/n{size_name(size)}"
        self.sweep_directory = sweep_directory


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
