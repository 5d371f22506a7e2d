"""
How processes that share an experiment grid's output directory claim its runs (`RunLock`) and
tell each other that a run failed for good (`DIRECTORY.failed`).
"""

import json
import logging
import os
import socket
from typing import Any, Dict, Optional

logger = logging.getLogger(__name__)


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
