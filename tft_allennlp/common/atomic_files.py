"""
Files that appear whole or not at all, and disk errors that name the file.

Every writer here drafts its file beside the final one (a hidden name starting with
`DRAFT_PREFIX`, in the same directory, so the rename is atomic), flushes it to the disk, then
renames it over the final name. A process killed at any instant leaves either the old file or
the new one, never a truncated one; at worst a draft, which `remove_drafts` deletes when the
directory is used again. An `OSError` that names no file (a `write` on a full disk raises
`[Errno 28] No space left on device` and nothing else) is raised again naming the file being
written.
"""

import contextlib
import errno
import glob
import json
import logging
import os
import shutil
import tempfile
from typing import IO, Any, Callable, Iterator, List, Optional, Tuple, cast

import torch

logger = logging.getLogger(__name__)

# Drafts of a file, in its own directory.
DRAFT_PREFIX = ".tft-partial-"


@contextlib.contextmanager
def naming_path(path: str) -> Iterator[None]:
    """Raises an `OSError` that names no file again, as the same error about `path`."""
    try:
        yield
    except OSError as error:
        if error.filename is not None:
            raise
        code = error.errno if error.errno is not None else errno.EIO
        raise OSError(code, error.strerror or os.strerror(code), str(path)) from error


def _new_draft(path: str) -> Tuple[int, str]:
    """A new empty draft file for `path` in its directory (which must exist): fd and name."""
    directory, name = os.path.split(os.path.abspath(path))
    with naming_path(path):
        return tempfile.mkstemp(prefix=DRAFT_PREFIX + name + ".", dir=directory)


@contextlib.contextmanager
def atomic_output(path: str, mode: str = "w", encoding: str = "utf-8") -> Iterator[IO]:
    """
    An open draft of `path`; once the block ends without an error, flushed to the disk and
    renamed over `path`. On an error the draft is removed and `path` is as it was.
    """
    handle, draft = _new_draft(path)
    try:
        with naming_path(path):
            with open(handle, mode, encoding=None if "b" in mode else encoding) as stream:
                yield stream
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(draft, path)
    except BaseException:
        if os.path.exists(draft):
            os.remove(draft)
        raise


def write_atomically(path: str, writer: Callable[[str], Any]) -> None:
    """
    `writer(draft)` writes a draft of `path` under the name it is given (for writers that open
    the file themselves: `tarfile`, `torch.save` to a path); the draft then replaces `path`.
    """
    handle, draft = _new_draft(path)
    os.close(handle)
    try:
        with naming_path(path):
            writer(draft)
            with open(draft, "rb") as stream:
                os.fsync(stream.fileno())
            os.replace(draft, path)
    except BaseException:
        if os.path.exists(draft):
            os.remove(draft)
        raise


def write_json_atomically(path: str, content: Any, indent: int = 2) -> None:
    with atomic_output(path) as stream:
        json.dump(content, stream, indent=indent)


def save_torch_atomically(state: Any, path: str) -> None:
    with atomic_output(path, "wb") as stream:
        writer = _WriteErrors(stream, path)
        try:
            torch.save(state, cast(IO[bytes], writer))
        except RuntimeError:
            # torch reports a failed write of its own as "unexpected pos": the disk's error is
            # the one to raise.
            if writer.error is not None:
                raise writer.error from None
            raise


class _WriteErrors:
    """
    A binary stream that keeps the `OSError` its `write` raised; `name` is the file it drafts.
    """

    def __init__(self, stream: IO[bytes], name: str) -> None:
        self._stream = stream
        self.name = name
        self.error: Optional[OSError] = None

    def write(self, data: bytes) -> int:
        try:
            return self._stream.write(data)
        except OSError as error:
            self.error = error
            raise

    def flush(self) -> None:
        self._stream.flush()


def link_atomically(source: str, path: str) -> None:
    """`path` becomes a hard link to `source` (a copy where links are impossible), atomically."""

    def link(draft: str) -> None:
        os.remove(draft)
        try:
            os.link(source, draft)
        except OSError:
            shutil.copyfile(source, draft)

    write_atomically(path, link)


def same_content(path1: str, path2: str) -> bool:
    """Whether two existing files are one file or hold the same bytes."""
    if os.path.samefile(path1, path2):
        return True
    if os.path.getsize(path1) != os.path.getsize(path2):
        return False
    with open(path1, "rb") as stream1, open(path2, "rb") as stream2:
        while True:
            block1, block2 = stream1.read(1 << 20), stream2.read(1 << 20)
            if block1 != block2:
                return False
            if not block1:
                return True


def remove_drafts(directory: str) -> List[str]:
    """Deletes the drafts that killed writers left in `directory`; returns their paths."""
    drafts = glob.glob(os.path.join(glob.escape(directory), DRAFT_PREFIX + "*"))
    for draft in drafts:
        if os.path.isdir(draft):
            shutil.rmtree(draft)
        else:
            os.remove(draft)
    if drafts:
        logger.info("Removed drafts of an interrupted run: %s", ", ".join(drafts))
    return drafts
