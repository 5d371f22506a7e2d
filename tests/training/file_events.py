"""
Every file event of a forked `allennlp` child in one directory, counted, logged, and, for the
recovery tests, the moment to kill it. While `watching_file_events()` is open, a child forked
with `events_environment(DIRECTORY, LOG, kill_at=K)` in its environment logs each of its file
events in DIRECTORY to LOG and SIGKILLs itself right after the K-th, as an out-of-memory killer
or a preempted machine would, with the directory exactly as that event left it. Enumerating
K = 1..N (N from a run without a kill) kills the run at every such moment, not at sampled ones.
`kill_signal` sends another signal instead (a scheduler's SIGTERM, a Ctrl-C).

An event is any call that changes what the directory holds: a file opened for writing (created
or truncated: `open`, also through `codecs`, `gzip`, `tarfile` and logging, and `os.open` with
`O_CREAT` or `O_TRUNC`, as `tempfile` and file locks create files), a rename or replacement, a
hard link, a removal, a directory made or removed. Writes into a file already open are not
events: a kill right after the open shows the file at its emptiest. Each event is one line of
the log, `NUMBER KIND PATH` (the path relative to the directory), written unbuffered so that it
survives the kill.

The functions are wrapped in this process while the block is open, and act only in children
whose environment names a directory (this process's never does); a child that runs as a new
interpreter (on a machine where the test process has initialised CUDA) is not watched.
"""

import builtins
import contextlib
import os
import shutil
import signal
from typing import Dict, Iterator, List, Optional, Tuple

import pytest

WRITING_MODES = set("wax+")
CREATING_FLAGS = os.O_CREAT | os.O_TRUNC


DIRECTORY, LOG, KILL_AT = "TFT_TEST_EVENTS_DIR", "TFT_TEST_EVENTS_LOG", "TFT_TEST_KILL_AT"
KILL_SIGNAL = "TFT_TEST_KILL_SIGNAL"


def events_environment(
    directory, log, kill_at: Optional[int] = None, kill_signal: int = signal.SIGKILL
) -> Dict[str, str]:
    """
    The environment of a child whose events in `directory` are logged to `log`, and that sends
    itself `kill_signal` right after event `kill_at`.
    """
    environment = {DIRECTORY: os.path.abspath(directory), LOG: os.path.abspath(log)}
    if kill_at is not None:
        environment[KILL_AT] = str(kill_at)
        environment[KILL_SIGNAL] = str(int(kill_signal))
    return environment


@contextlib.contextmanager
def watching_file_events() -> Iterator[None]:
    state = {"count": 0, "log": None}
    original_open = builtins.open
    original_os_open = os.open

    def event(kind, path):
        directory = os.environ.get(DIRECTORY)
        if directory is None or isinstance(path, int):
            return
        path = os.path.abspath(os.fsdecode(path))
        if path != directory and not path.startswith(directory + os.sep):
            return
        state["count"] += 1
        if state["log"] is None:
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
            state["log"] = original_os_open(os.environ[LOG], flags, 0o644)
        relative = os.path.relpath(path, directory)
        os.write(state["log"], f"{state['count']}\t{kind}\t{relative}\n".encode())
        if str(state["count"]) == os.environ.get(KILL_AT):
            os.kill(os.getpid(), int(os.environ.get(KILL_SIGNAL, signal.SIGKILL)))

    def watched_open(file, mode="r", *args, **kwargs):
        stream = original_open(file, mode, *args, **kwargs)
        if WRITING_MODES & set(mode):
            event("open", file)
        return stream

    def watched_os_open(path, flags, *args, **kwargs):
        handle = original_os_open(path, flags, *args, **kwargs)
        if flags & CREATING_FLAGS and kwargs.get("dir_fd") is None:
            event("create", path)
        return handle

    def after(kind, function, position=0):
        def watched(*args, **kwargs):
            result = function(*args, **kwargs)
            if kwargs.get("dir_fd") is None and kwargs.get("dst_dir_fd") is None:
                event(kind, args[position])
            return result

        return watched

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(builtins, "open", watched_open)
        patch.setattr(os, "open", watched_os_open)
        for name, kind, position in (
            ("replace", "rename", 1),
            ("rename", "rename", 1),
            ("link", "link", 1),
            ("remove", "remove", 0),
            ("unlink", "remove", 0),
            ("mkdir", "mkdir", 0),
            ("rmdir", "rmdir", 0),
        ):
            patch.setattr(os, name, after(kind, getattr(os, name), position))
        patch.setattr(shutil, "rmtree", after("rmtree", shutil.rmtree))
        yield


def read_events(log) -> List[Tuple[int, str, str]]:
    """The (number, kind, path) of each event in `log`."""
    events = []
    with open(log) as lines:
        for line in lines:
            number, kind, path = line.rstrip("\n").split("\t")
            events.append((int(number), kind, path))
    return events
