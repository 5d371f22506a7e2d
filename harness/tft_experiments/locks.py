"""
How processes that share an experiment grid's output directory hold it together (`hold_grid`),
claim its runs (`RunLock`) and tell each other that a run failed for good (`DIRECTORY.failed`).
"""

import json
import logging
import os
import socket
import time
from typing import Any, Callable, Dict, Optional

from tft_allennlp.common.folder_lock import FolderInUseError, FolderLock, check_free

logger = logging.getLogger(__name__)

# How long a process waits for another to finish changing the grid's spec.
SPEC_CHANGE_WAIT_SECONDS = 60.0


def hold_grid(output_dir: str, changes_spec: Callable[[], bool]) -> FolderLock:
    """
    The lock of the grid `output_dir` (`FolderLock`, `.tft-lock` in it), held by every
    `tft-experiment` on it for its life: shared by the processes that run the spec the
    directory ran with (shards, `--jobs` on several machines), as the run locks share out its
    runs. A process alone on the grid holds it exclusively until it has written its spec
    (`share`). A process whose spec differs from the directory's (`changes_spec()`: it would
    rewrite `spec.json`, and with `--force` delete finished runs) while another runs the grid
    is refused (`FolderInUseError`): the other would write its own spec back, or report runs
    deleted under it. A process that arrives while one is changing the spec waits for it (up to
    `SPEC_CHANGE_WAIT_SECONDS`), then compares its spec with the new one.
    """
    deadline = time.monotonic() + SPEC_CHANGE_WAIT_SECONDS
    while True:
        alone = FolderLock(output_dir)
        if alone.try_acquire():
            return alone
        together = FolderLock(output_dir, shared=True)
        if together.try_acquire():
            try:
                changes = changes_spec()
            except BaseException:
                together.release()
                raise
            if not changes:
                return together
            together.release()
            raise FolderInUseError(
                f"{output_dir}: another tft-experiment runs this grid now, with the spec of its "
                "spec.json; run the changed spec once it has ended, or give another output_dir"
            )
        if time.monotonic() >= deadline:
            check_free(output_dir)  # the refusal that names the process changing the spec
        time.sleep(0.2)


class RunLock:
    """
    An exclusive claim on a run: `DIRECTORY.lock`, created atomically, naming host and pid.

    After `acquire` took over the claim of a process that died holding it, `taken_over` is that
    claim: its `host` and `pid`, and `claimed`, when it was made (the lock file's time).
    """

    def __init__(self, directory: str) -> None:
        self.path = directory.rstrip("/") + ".lock"
        self.owner = {"host": socket.gethostname(), "pid": os.getpid()}
        self.taken_over: Optional[Dict[str, Any]] = None

    def acquire(self) -> bool:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        for _ in range(2):
            try:
                handle = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                owner = self._stale_owner()
                if owner is None:
                    return False
                logger.warning("Taking over %s from a process that no longer runs.", self.path)
                try:
                    claimed = os.path.getmtime(self.path)
                except FileNotFoundError:  # another process took it over first
                    continue
                self.taken_over = {**owner, "claimed": claimed}
                _remove(self.path)
                continue
            with os.fdopen(handle, "w") as out:
                json.dump(self.owner, out)
            return True
        return False

    def release(self) -> None:
        _remove(self.path)

    def held(self) -> bool:
        """Whether a process (of another host, or a live one of this host) holds the claim."""
        return os.path.exists(self.path) and self._stale_owner() is None

    def _stale_owner(self) -> Optional[Dict[str, Any]]:
        """
        The owner of a lock of a dead process on this host, or None (another host's locks are
        never stale here).
        """
        try:
            with open(self.path) as handle:
                owner = json.load(handle)
        except (OSError, ValueError):
            return None  # being written right now
        if owner.get("host") != self.owner["host"]:
            return None
        try:
            os.kill(int(owner["pid"]), 0)
        except ProcessLookupError:
            return owner
        except PermissionError:
            return None
        return None


def mark_failed(directory: str, reason: str, log: Optional[str]) -> None:
    """Leaves `DIRECTORY.failed`, so that the processes waiting for the run stop waiting."""
    os.makedirs(os.path.dirname(directory), exist_ok=True)
    with open(directory + ".failed", "w") as marker:
        json.dump({"reason": reason, "log": log}, marker)


def unmark_failed(directory: str) -> None:
    """Before a new attempt of a run that failed before."""
    _remove(directory + ".failed")


def failed_since(directory: str, since: float) -> bool:
    """Whether a process marked the run `directory` failed at or after time `since`."""
    marker = directory + ".failed"
    return os.path.exists(marker) and os.path.getmtime(marker) >= since


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
