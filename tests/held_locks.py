"""
Locks of `tft_allennlp.common.folder_lock` held by other processes, as a live command holds
them: forked children that take a lock and keep it while a block runs (`held_elsewhere`), or
die holding it (`died_holding`), for the tests of the commands that must refuse or reclaim it.
"""

import contextlib
import os
from typing import Iterator

from tft_allennlp.common.folder_lock import LOCK_FILE, FolderLock


@contextlib.contextmanager
def held_elsewhere(
    folder, name: str = LOCK_FILE, command: str = "allennlp train", shared: bool = False
) -> Iterator[int]:
    """
    While open, a forked child holds the lock of `folder` (`FolderLock(folder, name)`, as
    `command` would, `shared` or not); yields its process id. The child lets it go and exits
    when the block ends.
    """
    ready_read, ready_write = os.pipe()
    done_read, done_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child never returns into the test
        code = 1
        try:
            os.close(ready_read)
            os.close(done_write)
            lock = FolderLock(str(folder), name, shared=shared, command=command).acquire()
            os.write(ready_write, b"x")
            os.read(done_read, 1)  # until the test closes its end
            lock.release()
            code = 0
        finally:
            os._exit(code)
    os.close(ready_write)
    os.close(done_read)
    try:
        if os.read(ready_read, 1) != b"x":
            raise RuntimeError(f"the child could not take the lock of {folder}")
        yield pid
    finally:
        os.close(done_write)
        os.close(ready_read)
        os.waitpid(pid, 0)


def died_holding(folder, name: str = LOCK_FILE, command: str = "allennlp train") -> int:
    """The process id of a forked child that took the lock of `folder` and died holding it."""
    pid = os.fork()
    if pid == 0:
        try:
            FolderLock(str(folder), name, command=command).acquire()
        finally:
            os._exit(0)  # without letting go: its lock file stays, naming it
    os.waitpid(pid, 0)
    return pid
