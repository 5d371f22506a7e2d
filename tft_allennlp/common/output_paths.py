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
- A command killed midway leaves nothing but what it wrote, and the next command removes that
  and nothing else: drafts of files are named after the process (`NAME.HOST.PID.tmp`), and a
  directory is written into a staging folder inside it (`.tft-staging.HOST.PID`) whose files are
  moved into place only once all of them are written. The next command that writes there removes
  the drafts and staging folders of processes of this host that are gone; everything else in
  the directory is the user's, and counts as content (refused without `--force`, kept with it).
  A staging folder names nothing outside itself, so no file left in the directory (a marker of
  an older version, or one someone wrote) can make a command delete another file.
- One command at a time writes an output: a directory is locked while a command writes it
  (`tft_allennlp.common.folder_lock`: `.tft-lock` in it), a file while a command drafts and
  renames it (`.NAME.tft-lock` beside it), before the checks above; a second command that would
  write the same output meanwhile is refused in one line naming it and the first command's
  process. Lock files are no one's content: they go when their command ends.

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
from typing import Iterable, Iterator, List, Optional, Sequence, TextIO

from allennlp.common.checks import ConfigurationError

from tft_allennlp.common.atomic_files import naming_path
from tft_allennlp.common.folder_lock import (
    HOST,
    FolderLock,
    check_free,
    is_lock_file,
    lock_name,
    process_alive,
)

logger = logging.getLogger(__name__)

# Where a command writes a directory's files before they are moved into it.
STAGING_PREFIX = ".tft-staging."
# The marker that older versions left in a directory they were writing ({"host", "pid", ...});
# one of a process that is gone is removed, alone.
PARTIAL_MARKER = ".tft-partial.json"


def add_force_argument(subparser: argparse.ArgumentParser, what: str) -> None:
    """The `--force` flag, described for the command's output (`what`)."""
    subparser.add_argument(
        "--force",
        action="store_true",
        help=f"replace {what} if it exists (without it, an existing one is refused)",
    )


def draft_name(target: str) -> str:
    """The draft of `target` that this process writes (beside it, renamed over it at the end)."""
    return f"{target}.{HOST}.{os.getpid()}.tmp"


@contextlib.contextmanager
def drafted_file(target: str, path: str) -> Iterator[TextIO]:
    """
    The open draft of the text file `target` (`draft_name`), renamed over `target` once the
    block ends without an error, and removed on any error, so that `target` is as it was. Errors
    of writing it name `path`, the output as the user gave it.
    """
    draft = draft_name(target)
    try:
        handle = open(draft, "x", encoding="utf-8")
    except OSError as error:
        raise ConfigurationError(f"{path}: cannot write: {error.strerror}") from None
    try:
        with naming_path(path), handle:
            yield handle
        os.replace(draft, target)
    except BaseException:
        os.remove(draft)
        raise


def staging_name(directory: str) -> str:
    """The staging folder this process writes in `directory` (`.tft-staging.HOST.PID`)."""
    return os.path.join(directory, f"{STAGING_PREFIX}{HOST}.{os.getpid()}")


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
    check_free(directory, lock_name(target), path)
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


@contextlib.contextmanager
def locked_output_file(
    path: str, force: bool, inputs: Iterable[Optional[str]] = ()
) -> Iterator[str]:
    """
    Holds the lock of the output file `path` (`.NAME.tft-lock` beside it) while the block writes
    it, and yields the real path to write (`check_output_file`, checked under the lock).
    """
    target = os.path.realpath(path)
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        raise ConfigurationError(f"{path}: no such directory: {directory}")
    with FolderLock(directory, lock_name(target), what=path, create=False):
        yield check_output_file(path, force, inputs)


def check_output_directory(
    path: str, force: bool, inputs: Iterable[Optional[str]] = (), own: Sequence[str] = ()
) -> None:
    """
    Refuses the output directory `path` if another command holds its lock, if it is a file, an
    input directory or the directory of an input file, or (without `force`) a directory that
    holds anything but the leftovers of killed commands (`is_leftover`) and lock files, unless
    it holds one of the files `own` that mark the command's own output (which it resumes).
    """
    if os.path.exists(path) and not os.path.isdir(path):
        raise ConfigurationError(f"{path}: exists and is not a directory.")
    if os.path.isdir(path):
        check_free(path, what=path)
    check_not_reading(path, inputs)
    if not os.path.isdir(path) or force:
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
    Checks the output directory `path` (`check_output_directory`) and yields a new staging
    folder inside it, where the command writes its files; once the block ends, they are moved
    into `path` (with `force`, over the files of the same name) and the staging folder is
    removed. A block that fails leaves `path` as it was (and removes it if the block created it).
    The leftovers of killed commands there are removed first (`remove_leftovers`). The
    directory's lock is held throughout (taken before the checks, unless this process holds it).
    """
    if os.path.exists(path) and not os.path.isdir(path):
        raise ConfigurationError(f"{path}: exists and is not a directory.")
    check_not_reading(path, inputs)  # before a lock file is written there
    with FolderLock(path) as lock:
        check_output_directory(path, force, inputs)
        created = lock.made_folder
        remove_leftovers(path)
        staging = staging_name(path)
        shutil.rmtree(staging, ignore_errors=True)  # an earlier, failed block of this process
        os.mkdir(staging)
        try:
            yield staging
            for name in sorted(os.listdir(staging)):
                _move_over(os.path.join(staging, name), os.path.join(path, name))
            os.rmdir(staging)
        except BaseException:
            if created:
                _remove_all_but_locks(path)
            else:
                shutil.rmtree(staging, ignore_errors=True)
            raise


def _remove_all_but_locks(directory: str) -> None:
    """Empties `directory` of everything but lock files (which their holders remove)."""
    for name in os.listdir(directory):
        if is_lock_file(name):
            continue
        entry = os.path.join(directory, name)
        if os.path.isdir(entry) and not os.path.islink(entry):
            shutil.rmtree(entry, ignore_errors=True)
        else:
            try:
                os.remove(entry)
            except OSError:
                pass


def _move_over(source: str, target: str) -> None:
    """Renames `source` to `target`, replacing a file or directory there."""
    if os.path.isdir(target) and not os.path.islink(target):
        shutil.rmtree(target)
    os.replace(source, target)


def remove_leftovers(directory: str) -> List[str]:
    """
    Removes what killed commands of this host left in `directory` (`is_leftover`): drafts,
    staging folders and old markers; returns their paths.
    """
    drafts = remove_stale_drafts(directory)
    removed = []
    for entry in sorted(os.listdir(directory)):
        if entry != PARTIAL_MARKER and is_leftover(directory, entry):
            shutil.rmtree(os.path.join(directory, entry))
            removed.append(os.path.join(directory, entry))
    if _old_marker_of_the_gone(directory):
        os.remove(os.path.join(directory, PARTIAL_MARKER))
        removed.append(os.path.join(directory, PARTIAL_MARKER))
    if removed:
        logger.warning("Removed what killed commands left: %s", ", ".join(removed))
    return drafts + removed


def is_leftover(directory: str, entry: str) -> bool:
    """
    Whether `entry` of `directory` was left by a killed command of this host: a draft
    (`NAME.HOST.PID.tmp`) or staging folder (`.tft-staging.HOST.PID`) of a process that is gone,
    or an older version's marker of one.
    """
    path = os.path.join(directory, entry)
    if entry == PARTIAL_MARKER:
        return _old_marker_of_the_gone(directory)
    staging = re.match(rf"^{re.escape(STAGING_PREFIX + HOST)}\.(?P<pid>\d+)$", entry)
    if staging is not None:
        real_folder = os.path.isdir(path) and not os.path.islink(path)
        return real_folder and _gone(None, int(staging.group("pid")))
    draft = re.match(rf"^.+\.{re.escape(HOST)}\.(?P<pid>\d+)\.tmp$", entry)
    return draft is not None and os.path.isfile(path) and _gone(None, int(draft.group("pid")))


def remove_stale_drafts(directory: str, name: Optional[str] = None) -> List[str]:
    """
    Removes the drafts in `directory` that processes of this host left and are gone: of the
    file `name` (also in the older `NAME.PID.tmp` form), or, without a name, of every file;
    returns their paths.
    """
    if name is None:
        pattern = re.compile(rf"^.+\.{re.escape(HOST)}\.(?P<pid>\d+)\.tmp$")
    else:
        pattern = re.compile(rf"^{re.escape(name)}(\.{re.escape(HOST)})?\.(?P<pid>\d+)\.tmp$")
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


def _old_marker_of_the_gone(directory: str) -> bool:
    """Whether `directory` holds an older version's marker of a process that is gone."""
    try:
        with open(os.path.join(directory, PARTIAL_MARKER)) as handle:
            owner = json.load(handle)
        return _gone(owner.get("host"), int(owner["pid"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def _gone(host: Optional[str], pid: int) -> bool:
    """Whether process `pid` of `host` (None: this host) has ended, as far as can be told."""
    if host is not None and host != HOST:
        return False
    # This process's own: an earlier, failed command of it.
    return pid == os.getpid() or not process_alive(pid)


def _contents(directory: str) -> List[str]:
    """What `directory` holds but the leftovers of killed commands and lock files."""
    return [
        name
        for name in os.listdir(directory)
        if not is_lock_file(name) and not is_leftover(directory, name)
    ]


def same_path(path1: str, path2: str) -> bool:
    """Whether two paths name the same file or directory (also through links)."""
    if os.path.exists(path1) and os.path.exists(path2):
        return os.path.samefile(path1, path2)
    return os.path.realpath(path1) == os.path.realpath(path2)
