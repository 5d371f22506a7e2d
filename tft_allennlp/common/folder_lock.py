"""
One command at a time writes a folder: an advisory lock (`fcntl.flock`) on a lock file in it.

`allennlp train` locks its serialization directory for the whole run, `tft-export` its output
directory and `tft-align` and `tft-show` their output file (a lock file beside it), before they
look at what is there; a second command that would write the same place while the first is alive
is refused in one line naming the place and its owner, and touches nothing. The lock file
(`.tft-lock`, or `.NAME.tft-lock` beside an output file `NAME`) holds its owner as JSON (host,
process, command, when), written to a draft and renamed over it; the owner removes it when it
ends. The system releases the lock of a process that dies, however it dies, so the next command
takes it over: where the file names a process of this host that is gone, it says so in one
warning ("reclaimed the lock of process PID on HOST, which is gone").

The lock is advisory: it keeps out the commands that take it (every command of the plugin that
writes a run or an output), not other programs. Processes forked or spawned by the owner
(distributed workers, data loader workers) never take it again: the launcher holds it for them.
A shared hold (`shared=True`) lets several processes use a folder together while keeping out
any exclusive one (`allennlp tft-experiment`'s grid: see `tft_experiments.locks`).
"""

import datetime
import errno
import fcntl
import glob
import json
import logging
import os
import socket
import sys
import time
from typing import Any, Dict, Optional

from allennlp.common.checks import ConfigurationError

logger = logging.getLogger(__name__)

# The lock file of a folder, in it.
LOCK_FILE = ".tft-lock"
# This machine, as lock files (and the drafts of `output_paths`) name it.
HOST = socket.gethostname().split(".")[0] or "localhost"
# How long an attempt goes on while the lock is taken only for an instant (another command
# looking whether it is free, `holder`), and how long a refusal waits for the owner's record.
_RETRY_SECONDS = 0.05
_OWNER_WAIT_SECONDS = 1.0

# The locks this process holds, by the real path of their lock file.
_held: Dict[str, "FolderLock"] = {}


def _key(path: str) -> str:
    """The lock file `path` as `_held` knows it: its folder's real path, and its name (a lock
    file that is a symbolic link is replaced, not followed)."""
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


class FolderInUseError(ConfigurationError):
    """A folder (or file) that another live command holds the lock of."""


def lock_name(output_file: str) -> str:
    """The lock file of the output file `output_file`, beside it (`.NAME.tft-lock`)."""
    return f".{os.path.basename(output_file)}{LOCK_FILE}"


def is_lock_file(name: str) -> bool:
    """Whether `name`, an entry of a folder, is a lock file of this module or a draft of one."""
    return name.endswith(LOCK_FILE) or (LOCK_FILE + "." in name and name.endswith(".tmp"))


class FolderLock:
    """
    The lock on `folder` (with `name`, on the output file `name` stands for), held while the
    context is open: `with FolderLock(directory): ...`. Entering it again in the same process
    (nested) holds the same lock.

    # Parameters

    folder : `str`
        The folder to lock, or where the lock file of an output file lies.
    name : `str`, optional (default = `LOCK_FILE`)
        The lock file in `folder` (`lock_name(output_file)` for an output file).
    what : `str`, optional (default = `None`)
        The path a refusal starts with, as the user gave it (default: `folder`).
    create : `bool`, optional (default = `True`)
        Make `folder` (and its parents) where it is missing; a folder made here is removed
        again when the lock is released if nothing was written in it. Without it, a missing
        folder is an error.
    shared : `bool`, optional (default = `False`)
        Take a shared hold: other shared holders are let in, exclusive ones refused. A shared
        holder records no owner.
    command : `str`, optional (default = `None`)
        What holds the lock, for the refusals of others (default: the command line's program
        and subcommand, `allennlp train`).
    """

    def __init__(
        self,
        folder: str,
        name: str = LOCK_FILE,
        what: Optional[str] = None,
        create: bool = True,
        shared: bool = False,
        command: Optional[str] = None,
    ) -> None:
        self.folder = str(folder)
        self.path = os.path.join(self.folder, name)
        self.what = what if what is not None else self.folder
        self.create = create
        self.shared = shared
        self.command = command if command is not None else _command_line()
        self.owner: Optional[Dict[str, Any]] = None
        """The record this process wrote (None while it holds no exclusive lock)."""
        self.reclaimed: Optional[Dict[str, Any]] = None
        """The record of the process that held the lock before and is gone, if any."""
        self._key = _key(self.path)
        self._handle: Optional[int] = None
        self._pid = os.getpid()
        self._made_folder = False
        self._nested = False

    def __enter__(self) -> "FolderLock":
        self.acquire()
        return self

    def __exit__(self, *exception: Any) -> None:
        self.release()

    @property
    def made_folder(self) -> bool:
        """Whether taking the lock made the folder (removed at release if left empty)."""
        return self._made_folder

    def acquire(self) -> "FolderLock":
        """
        Takes the lock, or raises a `FolderInUseError` naming the folder and the owner while
        another process holds it (exclusively, or at all for an exclusive lock).
        """
        self._acquire(refuse=True)
        return self

    def try_acquire(self) -> bool:
        """Takes the lock if no other process holds it (as `acquire`), or says it could not."""
        return self._acquire(refuse=False)

    def _acquire(self, refuse: bool) -> bool:
        outer = _held.get(self._key)
        if outer is not None and outer._pid == os.getpid():
            # Nested in a hold of this process (a command around a library function).
            self._nested = True
            self._made_folder = outer._made_folder
            return True
        if os.path.exists(self.folder) and not os.path.isdir(self.folder):
            raise ConfigurationError(f"{self.what}: exists and is not a directory.")
        if not os.path.isdir(self.folder):
            if not self.create:
                raise ConfigurationError(f"{self.what}: no such directory: {self.folder}")
            os.makedirs(self.folder, exist_ok=True)
            self._made_folder = True
        self._handle = self._take(fcntl.LOCK_SH if self.shared else fcntl.LOCK_EX, refuse)
        if self._handle is None:
            return False
        if not self.shared:
            try:
                self._record_owner()
            except BaseException:
                os.close(self._handle)
                self._handle = None
                raise
        _held[self._key] = self
        return True

    def share(self) -> None:
        """Lets other shared holders in: the exclusive lock becomes a shared one."""
        if self._handle is not None and not self.shared:
            fcntl.flock(self._handle, fcntl.LOCK_SH)  # waits while another takes it over
            self.shared = True

    def release(self) -> None:
        """Lets the lock go; the last holder removes the lock file (and a folder it made)."""
        if self._nested or self._handle is None:
            self._nested = False
            return
        if _held.get(self._key) is self:
            del _held[self._key]
        try:
            last = not self.shared
            if self.shared:  # the last shared holder, if it can have the lock alone
                try:
                    fcntl.flock(self._handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    last = True
                except BlockingIOError:
                    pass
            if last and _same_file(self._handle, self.path):
                _remove(self.path)
        finally:
            os.close(self._handle)
            self._handle = None
            self.owner = None
        if self._made_folder:
            try:
                os.rmdir(self.folder)  # only if nothing was written in it
            except OSError:
                pass

    def _take(self, mode: int, refuse: bool) -> Optional[int]:
        """
        An open handle of the lock file, locked in `mode`; where it cannot be, a refusal
        (`refuse`) or None.
        """
        deadline = time.monotonic() + _RETRY_SECONDS
        while True:
            try:
                flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
                handle = os.open(self.path, flags, 0o644)
            except FileNotFoundError:  # the folder was removed meanwhile (its owner made it)
                if not self.create:
                    raise ConfigurationError(
                        f"{self.what}: no such directory: {self.folder}"
                    ) from None
                os.makedirs(self.folder, exist_ok=True)
                continue
            except IsADirectoryError:
                raise ConfigurationError(
                    f"{self.what}: {self.path} is a directory; remove it to write here"
                ) from None
            except OSError as error:
                if error.errno != errno.ELOOP:
                    raise
                # A symbolic link, which no command writes: locking would lock its target.
                logger.warning("%s: removed %s, a symbolic link, not a lock.", self.what, self.path)
                os.unlink(self.path)
                continue
            try:
                fcntl.flock(handle, mode | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(handle)
                if time.monotonic() < deadline:
                    time.sleep(0.005)
                    continue
                if not refuse:
                    return None
                raise self._refusal() from None
            if _same_file(handle, self.path):
                return handle
            os.close(handle)  # its owner removed or replaced it since it was opened

    def _record_owner(self) -> None:
        """
        Writes this process into the lock file (a locked draft renamed over it, so that the
        lock holds on), after saying whose lock it took over.
        """
        assert self._handle is not None
        previous = _read_owner(self.path)
        if previous is not None and _gone(previous):
            self.reclaimed = previous
            logger.warning(
                "%s: reclaimed the lock of process %s on %s, which is gone.",
                self.what,
                previous.get("pid"),
                previous.get("host"),
            )
        self.owner = {
            "host": HOST,
            "pid": os.getpid(),
            "command": self.command,
            "since": datetime.datetime.now().isoformat(timespec="seconds"),
        }
        draft = f"{self.path}.{HOST}.{os.getpid()}.tmp"
        handle = os.open(draft, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)  # nobody else opens a draft
            os.write(handle, (json.dumps(self.owner) + "\n").encode())
            os.fsync(handle)
            os.replace(draft, self.path)
        except BaseException as error:
            os.close(handle)
            _remove(draft)
            if isinstance(error, OSError) and error.filename is None:  # a full disk
                code = error.errno or errno.EIO
                raise OSError(code, os.strerror(code), self.path) from error
            raise
        os.close(self._handle)
        self._handle = handle
        # The drafts of killed owners: none is written but under the lock.
        pattern = glob.escape(self.path) + ".*.tmp"
        for stale in glob.glob(pattern):
            _remove(stale)

    def _refusal(self) -> FolderInUseError:
        """The one-line error that names the place and the process that holds it."""
        owner = None
        deadline = time.monotonic() + _OWNER_WAIT_SECONDS
        while True:
            owner = _read_owner(self.path)
            # Being written (the owner took the lock an instant ago), or a gone owner's record.
            if (owner is not None and not _gone(owner)) or time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        return FolderInUseError(f"{self.what}: {in_use_by(owner)}")


def in_use_by(owner: Optional[Dict[str, Any]]) -> str:
    """What a refusal says of the owner `owner` (a lock file's record, None if unknown)."""
    if owner is None or _gone(owner):
        who = "another process"
    else:
        since = f", since {owner['since']}" if owner.get("since") else ""
        command = f"{owner['command']}, " if owner.get("command") else ""
        who = f"{command}process {owner.get('pid')} on {owner.get('host')}{since}"
    return f"in use by {who}; wait until it ends, or write elsewhere"


def holder(folder: str, name: str = LOCK_FILE) -> Optional[Dict[str, Any]]:
    """
    The owner record of the exclusive lock another process holds on `folder` (`{}` where it
    is not known yet), or None where none does (or this process holds it).
    """
    path = os.path.join(folder, name)
    held = _held.get(_key(path))
    if held is not None and held._pid == os.getpid():
        return None
    try:
        handle = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _read_owner(path) or {}
    finally:
        os.close(handle)
    return None


def check_free(folder: str, name: str = LOCK_FILE, what: Optional[str] = None) -> None:
    """A `FolderInUseError` (`what`: the path it starts with) while another process holds it."""
    owner = holder(folder, name)
    if owner is not None:
        raise FolderInUseError(f"{what if what is not None else folder}: {in_use_by(owner)}")


def _read_owner(path: str) -> Optional[Dict[str, Any]]:
    """The record in the lock file `path`; None where there is none (or it is being written)."""
    try:
        with open(path, encoding="utf-8") as stream:
            owner = json.load(stream)
    except (OSError, ValueError):
        return None
    return owner if isinstance(owner, dict) and "pid" in owner else None


def _gone(owner: Dict[str, Any]) -> bool:
    """Whether the process of `owner` (host and pid) has ended, as far as this host can tell."""
    if owner.get("host") != HOST:
        return False
    try:
        pid = int(owner["pid"])
    except (KeyError, TypeError, ValueError):
        return True
    return pid != os.getpid() and not process_alive(pid)


def process_alive(pid: int) -> bool:
    """Whether process `pid` of this host runs, as far as can be told (another user's does)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _same_file(handle: int, path: str) -> bool:
    """Whether the open `handle` is still the file at `path`."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(handle)
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError as error:
        if error.errno != errno.ENOENT:
            raise


def _command_line() -> str:
    """This process's program and subcommand (`allennlp train`), as a refusal names them."""
    words = [os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"]
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        words.append(sys.argv[1])
    return " ".join(words)
