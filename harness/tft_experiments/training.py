"""
How one run of an experiment grid trains: `allennlp train` of its config in a new interpreter,
its output in a log, and whether a killed attempt can go on from its last checkpoint.

A run stopped by a SIGTERM or a Ctrl-C saves a checkpoint at its batch and exits with 128 + the
signal's number (`tft_allennlp.common.child_processes`); that is `RunStopped`, not a failure: the
harness neither retries nor marks it, and the next invocation resumes it. The signal kills the
process outside the hold: before the run starts (also `RunStopped`), or as the finished run
exits (then it is done). `stop_running()` asks
every run this process started to stop so (the harness calls it when it is interrupted itself).
An attempt waits for the process of the one before it to let go of the run directory's lock.
"""

import glob
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from typing import IO, Any, Dict, List, Set

from tft_allennlp.common.child_processes import STOP_SIGNALS, end_with_parent
from tft_allennlp.common.folder_lock import holder
from tft_experiments.reuse import rendered_config
from tft_experiments.runs import Training

logger = logging.getLogger(__name__)

LOG = "train.log"

# The `allennlp` children running now, for `stop_running`.
_running: Set[subprocess.Popen] = set()
_running_lock = threading.Lock()


class RunStopped(Exception):
    """A run's `allennlp train` stopped on a signal, with a checkpoint to resume from."""

    def __init__(self, directory: str, returncode: int) -> None:
        self.directory = directory
        self.signal = signal.Signals(returncode - 128)
        super().__init__(f"{directory} stopped on {self.signal.name}, with a checkpoint")


def stop_running() -> None:
    """Sends SIGTERM to every run started here that is still training."""
    with _running_lock:
        for process in _running:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)


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
) -> str:
    """
    `allennlp train CONFIG -s DIRECTORY -f -o OVERRIDES` in a child process (with `resume`,
    `--recover` instead of `-f`: on from the checkpoint in DIRECTORY), its output in
    `DIRECTORY.log` while it runs and moved to `DIRECTORY/train.log` after (a resumed run's
    after the log of the attempts before it). Returns "done"; "killed" if SIGKILL ended it (an
    out-of-memory killer, a `kill -9`: nothing the run did, so its checkpoints are as good as
    before); or "failed". Raises `RunStopped` if it stopped on a signal.
    """
    log_path = directory.rstrip("/") + ".log"
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    wait_for_its_last_process(directory)
    if resume:
        _put_earlier_log_first(os.path.join(directory, LOG), log_path)
    start = "--recover" if resume else "-f"
    arguments = ["train", config, "-s", directory, start, "--file-friendly-logging"]
    arguments += ["-o", json.dumps(overrides), "--include-package", "tft_allennlp"]
    with open(log_path, "a" if resume else "w") as log:
        returncode = run_allennlp(arguments, log, environment)
    if os.path.isdir(directory):
        os.replace(log_path, os.path.join(directory, LOG))
    finished = os.path.exists(os.path.join(directory, "metrics.json"))
    if -returncode in STOP_SIGNALS and not finished:
        # Killed by the signal before `allennlp train` held it (while it started).
        raise RunStopped(directory, 128 - returncode)
    if returncode - 128 in STOP_SIGNALS:
        raise RunStopped(directory, returncode)
    # A stop signal that killed the process once it had let go of the signals, as it exited,
    # came after the run had finished: its metrics and archive were written under the signals'
    # hold, and the run is done.
    if (returncode == 0 or -returncode in STOP_SIGNALS) and finished:
        return "done"
    return "killed" if returncode in (-signal.SIGKILL, 128 + signal.SIGKILL) else "failed"


def wait_for_its_last_process(directory: str, poll_seconds: float = 0.5) -> None:
    """
    Waits while a process holds the run directory's lock (`folder_lock`): the `allennlp train`
    of an attempt whose harness died, stopping at its batch with a checkpoint, which a new
    attempt would be refused beside (or, before the lock, would have written over).
    """
    owner = holder(directory)
    if owner is not None:
        logger.warning(
            "%s: waiting for process %s, which trained it before and is still stopping.",
            directory,
            owner.get("pid", "?"),
        )
    while owner is not None:
        time.sleep(poll_seconds)
        owner = holder(directory)


def _stop_when_parent_dies() -> None:
    """
    In the child between fork and exec: a SIGTERM when the thread that started it ends, which
    only happens when the harness dies (that thread waits for the child).
    """
    end_with_parent(signal.SIGTERM)


def _put_earlier_log_first(moved: str, log_path: str) -> None:
    """
    Before a resumed attempt: the log of the attempts before it (`moved`, in the run directory)
    goes to the start of `log_path`, after which an attempt whose harness was killed left its
    own log.
    """
    if not os.path.exists(moved):
        return
    with open(moved) as earlier:
        text = earlier.read()
    if os.path.exists(log_path):
        with open(log_path) as later:
            text += later.read()
    with open(log_path, "w") as log:
        log.write(text)
    os.remove(moved)


def run_allennlp(arguments: List[str], log: IO[str], environment: Dict[str, str]) -> int:
    """
    `allennlp ARGUMENTS` in a new interpreter, with `environment` added to this process's, its
    output and errors written to `log`; the exit code. Every run gets a fresh process, so that
    no state (a loaded model, a CUDA context, the registry of a config's `--include-package`)
    carries over from one run to the next.

    On Linux the child gets a SIGTERM if this process dies first (a SIGKILL, the out-of-memory
    killer): it stops at its batch with a checkpoint, instead of training on unwatched while
    the next invocation of the grid, finding the run's claim dead, trains it too.
    """
    command = [sys.executable, "-m", "allennlp", *arguments]
    with subprocess.Popen(
        command,
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, **environment},
        preexec_fn=_stop_when_parent_dies,
    ) as process:
        with _running_lock:
            _running.add(process)
        try:
            # No kill on an interrupt (as `subprocess.run` would): the child saves its
            # checkpoint first, and `stop_running` tells it to if the interrupt was not its own.
            return process.wait()
        finally:
            with _running_lock:
                _running.discard(process)
