"""
Where the `tft-*` commands write: one policy, shared by every command that writes a file or a
directory.

- An output that exists is refused unless `--force` is given: an existing file, or a directory
  that is not empty (a user's checkpoint, an earlier export or submission). With `--force` the
  command replaces its own files there; other files in a directory stay.
- An output is never what the command reads, even with `--force`: an input file (in any
  spelling: relative, through a symbolic or hard link), or a directory that is an input
  directory or holds an input file (a serialization directory, a base checkpoint, a GLUE task
  folder).
- A command killed midway leaves no stray draft for good: drafts are named after the process
  (`NAME.HOST.PID.tmp`), and a directory a command is filling holds a marker
  (`PARTIAL_MARKER`) with its host and process id. The next command that writes there removes
  the drafts of processes that are gone, and takes a marked directory of a process that is gone
  as its own: one the killed command had created is emptied and written again, without
  `--force`.

Errors are `ConfigurationError`s whose message starts with the path, which the commands print
as one line.
"""

import argparse
import contextlib
import json
import logging
import os
import re
import shutil
import socket
from typing import Iterable, Iterator, List, Optional, Sequence

from allennlp.common.checks import ConfigurationError

logger = logging.getLogger(__name__)

# In a directory that a command is writing: {"host": ..., "pid": ..., "created": ...}.
PARTIAL_MARKER = ".tft-partial.json"
# This machine, as drafts and markers name it.
_HOST = socket.gethostname().split(".")[0] or "localhost"


def add_force_argument(subparser: argparse.ArgumentParser, what: str) -> None:
    """The `--force` flag, described for the command's output (`what`)."""
    subparser.add_argument(
        "--force",
        action="store_true",
        help=f"replace {what} if it exists (without it, an existing one is refused)",
    )


def draft_name(target: str) -> str:
    """The draft of `target` that this process writes (beside it, renamed over it at the end)."""
    return f"{target}.{_HOST}.{os.getpid()}.tmp"


def check_output_file(path: str, force: bool, inputs: Iterable[Optional[str]] = ()) -> str:
    """
    The real path to write the output file `path` to (through a symbolic link, the file it
    points to), once sure that writing it loses no data; removes the drafts of `path` that
    killed commands left.
    """
    target = os.path.realpath(path)
    if os.path.isdir(target):
        raise ConfigurationError(f"{path}: is a directory, not a file name for the output")
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        raise ConfigurationError(f"{path}: no such directory: {directory}")
    for source in inputs:
        if source is not None and same_path(source, target):
            raise ConfigurationError(
                f"{path}: is the input file {source}; writing it would destroy the input"
            )
    remove_stale_drafts(directory, os.path.basename(target))
    if os.path.lexists(path) and not force:
        raise ConfigurationError(f"{path}: exists; give --force to replace it")
    if os.path.exists(target) and not os.path.isfile(target):
        raise ConfigurationError(f"{path}: is not a regular file; give another output file")
    return target


def check_output_directory(
    path: str, force: bool, inputs: Iterable[Optional[str]] = (), own: Sequence[str] = ()
) -> None:
    """
    Refuses the output directory `path` if it is a file, an input directory or the directory of
    an input file, or (without `force`) a directory that holds anything but the leftovers of a
    killed command, or one of the files `own` that mark the command's own output (which it
    resumes).
    """
    if os.path.exists(path) and not os.path.isdir(path):
        raise ConfigurationError(f"{path}: exists and is not a directory.")
    check_not_reading(path, inputs)
    if not os.path.isdir(path) or force or _abandoned(path) is not None:
        return
    if any(os.path.exists(os.path.join(path, name)) for name in own):
        return
    if _contents(path):
        raise ConfigurationError(
            f"{path}: is not empty; give --force to write into it (files of the same name are "
            "replaced), or another output directory."
        )


def check_not_reading(
    path: str, inputs: Iterable[Optional[str]], role: str = "which this command reads"
) -> None:
    """
    Refuses the output directory `path` if it is an input directory or holds an input file
    (`role` says what the input is to the command, in the message).
    """
    for source in inputs:
        if source is None or not os.path.exists(source):
            continue
        directory = source if os.path.isdir(source) else os.path.dirname(os.path.abspath(source))
        if same_path(directory, path):
            raise ConfigurationError(
                f"{path}: is the directory of {source}, {role}; give another output directory."
            )


@contextlib.contextmanager
def output_directory(
    path: str, force: bool = False, inputs: Iterable[Optional[str]] = ()
) -> Iterator[str]:
    """
    Checks the output directory `path` (`check_output_directory`), creates it and marks it as
    being written until the block ends. A directory this block created is removed again if the
    block fails; one that a killed command had created and left marked is emptied first.
    """
    check_output_directory(path, force, inputs)
    marker = os.path.join(path, PARTIAL_MARKER)
    abandoned = _abandoned(path) if os.path.isdir(path) else None
    if abandoned is not None and abandoned.get("created"):
        logger.warning(
            "%s: left by a killed command (process %s); writing it again.",
            path,
            abandoned.get("pid"),
        )
        shutil.rmtree(path)
    created = not os.path.isdir(path) or not _contents(path)
    os.makedirs(path, exist_ok=True)
    remove_stale_drafts(path)
    with open(marker, "w") as handle:
        json.dump({"host": _HOST, "pid": os.getpid(), "created": created}, handle)
    try:
        yield path
    except BaseException:
        if created:
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.exists(marker):
            os.remove(marker)
        raise
    os.remove(marker)


def remove_stale_drafts(directory: str, name: Optional[str] = None) -> List[str]:
    """
    Removes the drafts in `directory` that processes of this host left and are gone: of the
    file `name` (also in the older `NAME.PID.tmp` form), or, without a name, of every file;
    returns their paths.
    """
    if name is None:
        pattern = re.compile(rf"^.+\.{re.escape(_HOST)}\.(?P<pid>\d+)\.tmp$")
    else:
        pattern = re.compile(rf"^{re.escape(name)}(\.{re.escape(_HOST)})?\.(?P<pid>\d+)\.tmp$")
    removed = []
    for entry in os.listdir(directory):
        match = pattern.match(entry)
        path = os.path.join(directory, entry)
        if match is None or not os.path.isfile(path) or not _gone(None, int(match.group("pid"))):
            continue
        os.remove(path)
        removed.append(path)
    if removed:
        logger.warning("Removed drafts of killed commands: %s", ", ".join(removed))
    return removed


def _abandoned(directory: str) -> Optional[dict]:
    """The marker of a killed command that was writing `directory`, if there is one."""
    try:
        with open(os.path.join(directory, PARTIAL_MARKER)) as handle:
            owner = json.load(handle)
        if _gone(owner.get("host"), int(owner["pid"])):
            return owner
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return None


def _gone(host: Optional[str], pid: int) -> bool:
    """Whether process `pid` of `host` (None: this host) has ended, as far as can be told."""
    if host is not None and host != _HOST:
        return False
    if pid == os.getpid():
        return True  # an earlier, failed command of this process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _contents(directory: str) -> List[str]:
    return [name for name in os.listdir(directory) if name != PARTIAL_MARKER]


def same_path(path1: str, path2: str) -> bool:
    """Whether two paths name the same file or directory (also through links)."""
    if os.path.exists(path1) and os.path.exists(path2):
        return os.path.samefile(path1, path2)
    return os.path.realpath(path1) == os.path.realpath(path2)
