"""
Extracting an untrusted model archive: only what loading reads, every member checked before it is
written, within a budget of disk.

A `model.tar.gz` can hold anything a tar file can: members that escape the extraction folder
(`member_problem`), members no command reads, and members that are far larger than the archive
(a gzip "bomb": 8 GiB of zeros compress to 8 MB). `extract_archive` reads the archive once, as a
stream, and for each member, before a byte of it is written:

- refuses it if it is not a plain file, folder or link inside its own folder;
- adds its declared size (tar headers give it before the data) to the running total of the
  archive, and refuses the archive once that total passes `TFT_ARCHIVE_MAX_SIZE` (default 32G),
  or passes `TFT_ARCHIVE_MAX_RATIO` (default 20) times the archive's compressed size, beyond its
  first 256 MiB (trained weights compress by a few percent, a vocabulary by 3-4x: real archives
  expand by 1.0-1.5x); the members it skips count too, since reading past them costs as much time;
- skips it, unwritten, if loading never reads it (`NEEDED_MEMBERS`);
- refuses it if it would leave less than 256 MiB free on the extraction folder's disk.

A refusal is one line naming the archive and the member; nothing extracted stays (members are
staged in a hidden folder and moved into place once all have passed), also when the command is
stopped midway (Ctrl-C, SIGTERM): the interruption carries a note naming the archive, which the
command's last line shows.
"""

import contextlib
import gzip
import logging
import os
import re
import shutil
import tarfile
import tempfile
import zlib
from typing import Dict, Iterator, List, NamedTuple, Optional, Set, Tuple

from allennlp.common.checks import ConfigurationError

logger = logging.getLogger(__name__)

MAX_SIZE_VARIABLE = "TFT_ARCHIVE_MAX_SIZE"
MAX_RATIO_VARIABLE = "TFT_ARCHIVE_MAX_RATIO"
DEFAULT_MAX_SIZE = 32 * 2**30
DEFAULT_MAX_RATIO = 20.0
RATIO_FREE_BYTES = 256 * 2**20
"""What an archive may expand to before its compression ratio is checked."""
DISK_RESERVE = 256 * 2**20
"""What extraction leaves free on the disk it writes to."""
ARCHIVED_TRANSFORMERS = "pretrained_transformers"
"""The folder of an archive that holds the copies of its base checkpoints' files (config,
tokenizer; `tft_allennlp.common.transformer_source`)."""
NEEDED_MEMBERS = ("config.json", "weights.th", "meta.json", "vocabulary", ARCHIVED_TRANSFORMERS)
"""What `load_archive` and the plugin read of an archive: these top-level files and folders."""
# Per tar member, the header's block (the data is padded to whole blocks).
_BLOCK = tarfile.BLOCKSIZE

# Extraction folders of archives being loaded -> the archive file, so that an error about a
# file in the folder names the archive.
_EXTRACTED: Dict[str, str] = {}


class UntrustedArchiveError(ConfigurationError):
    """An archive (or a file in it) that is refused; the message names it and says why."""


class ExtractionBudget(NamedTuple):
    """How much an archive may expand to: in all (bytes), and per compressed byte beyond its
    first `ratio_free` bytes."""

    max_size: int
    max_ratio: float
    ratio_free: int = RATIO_FREE_BYTES

    @classmethod
    def from_environment(cls) -> "ExtractionBudget":
        """The budget that `TFT_ARCHIVE_MAX_SIZE` and `TFT_ARCHIVE_MAX_RATIO` set, or the
        defaults; a `ConfigurationError` naming the variable for a value that is not one."""
        size_text = os.environ.get(MAX_SIZE_VARIABLE, "").strip()
        ratio_text = os.environ.get(MAX_RATIO_VARIABLE, "").strip()
        max_size = parse_size(size_text, MAX_SIZE_VARIABLE) if size_text else DEFAULT_MAX_SIZE
        try:
            max_ratio = float(ratio_text) if ratio_text else DEFAULT_MAX_RATIO
        except ValueError:
            max_ratio = float("nan")
        if not max_ratio >= 1.0:
            raise ConfigurationError(
                f"{MAX_RATIO_VARIABLE}={ratio_text!r}: not a number of 1 or more (how many times "
                "its compressed size an archive may expand to)"
            )
        return cls(max_size, max_ratio)


def parse_size(text: str, variable: str) -> int:
    """Bytes from `text` such as `512M`, `32G` or `1000000` (K, M, G, T are powers of 1024)."""
    found = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?", text.strip(), flags=re.IGNORECASE)
    if found is None:
        raise ConfigurationError(
            f"{variable}={text!r}: not a size (a number of bytes, or with K, M, G or T: 32G)"
        )
    power = " KMGT".index(found.group(2).upper() or " ")
    return int(float(found.group(1)) * 1024**power)


def member_problem(member: tarfile.TarInfo) -> Optional[str]:
    """Why `member` may not be extracted from an untrusted archive; None if it may."""
    name = member.name
    if name.startswith(("/", "\\")) or os.path.isabs(name) or re.match(r"^[A-Za-z]:", name):
        return "has an absolute path"
    if ".." in re.split(r"[/\\]", name):
        return "has '..' in its path"
    if member.size < 0:  # tarfile would read the same header again and again
        return "has a negative size"
    if member.isreg() or member.isdir():
        return None
    if member.issym() or member.islnk():
        kind = "a symbolic link" if member.issym() else "a hard link"
        target = member.linkname
        if target.startswith(("/", "\\")) or os.path.isabs(target):
            return f"is {kind} to the absolute path {target!r}"
        if ".." in re.split(r"[/\\]", target):
            return f"is {kind} to {target!r}, out of its folder"
        return None
    if member.ischr() or member.isblk():
        return "is a device file"
    if member.isfifo():
        return "is a named pipe"
    return f"is not a file, folder or link (tar type {member.type!r})"


def is_needed(member: tarfile.TarInfo) -> bool:
    """Whether loading reads `member` (it is, or is inside, one of `NEEDED_MEMBERS`)."""
    parts = [part for part in re.split(r"[/\\]", member.name) if part not in ("", ".")]
    return bool(parts) and parts[0] in NEEDED_MEMBERS


def extract_archive(
    archive_file: str,
    directory: str,
    name: Optional[str] = None,
    budget: Optional[ExtractionBudget] = None,
) -> None:
    """
    Extracts what loading reads of the model archive `archive_file` into `directory`, checking
    every member as the module docstring says.

    # Parameters

    archive_file : `str`
        The archive (a tar file, compressed or not).
    directory : `str`
        Where its members go; created if missing (and removed again if nothing was extracted).
    name : `str`, optional (default = `archive_file`)
        How messages name the archive.
    budget : `ExtractionBudget`, optional (default = `ExtractionBudget.from_environment()`)
        How much the archive may expand to.

    An archive refused is an `UntrustedArchiveError`, a file that is not a readable tar archive
    a `ConfigurationError`, each naming the archive (and the member); in every case, and when
    the command is interrupted, nothing is left in `directory`.
    """
    name = name or archive_file
    budget = budget or ExtractionBudget.from_environment()
    compressed = max(os.path.getsize(archive_file), 1)
    created = not os.path.isdir(directory)
    os.makedirs(directory, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".tft-extracting-", dir=directory)
    expanded = 0
    skipped: List[str] = []  # the first ten
    skipped_count = 0
    extracted: Set[str] = set()  # the regular files so far, by normalised name
    try:
        # One pass, member by member, into a staging folder: a gzip stream that is listed first
        # and extracted after is decompressed twice (0.4 s of the 90 MB MiniLM archive).
        with tarfile.open(archive_file, "r:*") as tar:
            for member in tar:
                problem = member_problem(member) or _link_problem(member, extracted)
                if problem is not None:
                    raise UntrustedArchiveError(_refusal(name, member.name, problem))
                expanded += _BLOCK + -(-member.size // _BLOCK) * _BLOCK
                _check_budget(name, member, expanded, compressed, budget)
                if not is_needed(member):
                    skipped_count += 1
                    skipped += [member.name] if len(skipped) < 10 else []
                    continue
                _check_free_space(name, member, staging)
                _extract_member(tar, member, staging, name)
                if member.isreg():
                    extracted.add(_normalised(member.name))
        for entry in os.listdir(staging):
            os.replace(os.path.join(staging, entry), os.path.join(directory, entry))
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as error:
        # tarfile's ReadError lists every compression it tried, one line each: say it in one.
        what = "not a tar file" if isinstance(error, tarfile.ReadError) else str(error)
        raise ConfigurationError(
            f"{name}: not a readable model archive (a model.tar.gz, or a serialization "
            f"directory): {what.splitlines()[0] if what else type(error).__name__}"
        ) from None
    except ConfigurationError:
        raise  # its message says it all
    except BaseException as error:
        # Ctrl-C, SIGTERM (AllenNLP's `SigTermReceived`) or a failure: the line the command ends
        # with for an interruption (`console`) says what was stopped.
        error.add_note(f"{name}: stopped while extracting it; nothing of it was kept")
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if created and not os.listdir(directory):
            os.rmdir(directory)
    if skipped_count:
        logger.info(
            "%s: left %d member(s) that loading does not read unextracted: %s",
            name,
            skipped_count,
            ", ".join(skipped) + (" ..." if skipped_count > len(skipped) else ""),
        )


def _link_problem(member: tarfile.TarInfo, extracted: Set[str]) -> Optional[str]:
    """
    Why the hard link `member` may not be extracted: its target must be a regular file
    extracted before it (`extracted`), else tarfile copies the target's data out of the archive
    for each link, uncounted (a skipped 100 MiB member linked 40 times writes 4 GiB).
    """
    if member.islnk() and _normalised(member.linkname) not in extracted:
        return f"is a hard link to {shown(member.linkname)}, which is no file extracted before it"
    return None


def _normalised(name: str) -> str:
    return os.path.normpath(name.replace("\\", "/")).lstrip("/")


def _extract_member(tar: tarfile.TarFile, member: tarfile.TarInfo, staging: str, name: str) -> None:
    """`member` into `staging`, through Python's `data` filter; what fails is one line."""
    try:
        tar.extract(member, staging, filter="data")
    except tarfile.FilterError as error:  # what the checks above do not foresee
        member_name = error.tarinfo.name if error.tarinfo is not None else member.name
        raise UntrustedArchiveError(_refusal(name, member_name, str(error))) from None
    except (OSError, KeyError) as error:  # a name too long, a file where a folder is, ...
        reason = getattr(error, "strerror", None) or str(error)
        raise UntrustedArchiveError(
            f"{name}: refused: member {shown(member.name)} cannot be extracted ({reason}); "
            "nothing was kept"
        ) from None


def _check_budget(
    name: str, member: tarfile.TarInfo, expanded: int, compressed: int, budget: ExtractionBudget
) -> None:
    """An `UntrustedArchiveError` once the members up to `member` (`expanded` bytes in all)
    exceed `budget`."""
    if expanded > budget.max_size:
        raise UntrustedArchiveError(
            f"{name}: refused: with member {member.name!r} it expands to more than "
            f"{_size(budget.max_size)}, the most an archive may ({MAX_SIZE_VARIABLE}); nothing "
            "was kept (docs/security.md)"
        )
    if expanded > budget.ratio_free and expanded > budget.max_ratio * compressed:
        raise UntrustedArchiveError(
            f"{name}: refused: with member {member.name!r} it expands to {_size(expanded)}, "
            f"{expanded / compressed:.0f} times its compressed {_size(compressed)} (at most "
            f"{budget.max_ratio:g} times: {MAX_RATIO_VARIABLE}), as a decompression bomb does; "
            "nothing was kept (docs/security.md)"
        )


def _check_free_space(name: str, member: tarfile.TarInfo, directory: str) -> None:
    """An `UntrustedArchiveError` if `member` would leave less than `DISK_RESERVE` free."""
    free = shutil.disk_usage(directory).free
    if member.size + DISK_RESERVE > free:
        raise UntrustedArchiveError(
            f"{name}: cannot extract member {member.name!r} ({_size(member.size)}): "
            f"{_size(free)} free in {os.path.dirname(directory)}; nothing was kept (set TMPDIR "
            "to a folder on a larger disk)"
        )


def _size(count: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "bytes" else f"{count:.1f} {unit}"
        count /= 1024
    raise AssertionError("unreachable")


def _refusal(archive: str, member: str, problem: str) -> str:
    return (
        f"{archive}: refused: member {shown(member)} {problem}; a model archive may hold only "
        "files, folders and links inside itself, so nothing was extracted (docs/security.md)"
    )


def shown(name: str, limit: int = 100) -> str:
    """`name` quoted for a message, its middle cut where it is longer than `limit`."""
    if len(name) <= limit:
        return repr(name)
    return repr(name[: limit // 2] + "…" + name[-limit // 2 :])


@contextlib.contextmanager
def extracted_archive(resolved_archive_file: str, cleanup: bool = True) -> Iterator[str]:
    """
    AllenNLP's `archival.extracted_archive` (a temporary folder holding the archive), extracting
    through `extract_archive`; with `cleanup=False` (as `load_archive` calls it) the caller
    removes the folder.
    """
    for stale in [path for path in _EXTRACTED if not os.path.isdir(path)]:
        del _EXTRACTED[stale]  # removed by `load_archive` (cleanup=False)
    directory = tempfile.mkdtemp()
    _EXTRACTED[directory] = str(resolved_archive_file)
    try:
        extract_archive(resolved_archive_file, directory)
    except BaseException:
        _forget(directory)
        raise
    try:
        yield directory
    finally:
        if cleanup:
            _forget(directory)


def _forget(directory: str) -> None:
    _EXTRACTED.pop(directory, None)
    shutil.rmtree(directory, ignore_errors=True)


def archive_name(path: str) -> str:
    """`path`, or `ARCHIVE (member)` when `path` lies in an archive being loaded."""
    found = archive_of(path)
    return str(path) if found is None else f"{found[0]} ({found[1]})"


def archive_of(path: str) -> Optional[Tuple[str, str]]:
    """The archive being loaded that `path` lies in, and the member it is; None if none."""
    absolute = os.path.abspath(path)
    for directory, archive in _EXTRACTED.items():
        if absolute.startswith(os.path.join(directory, "")):
            return archive, os.path.relpath(absolute, directory)
    return None
