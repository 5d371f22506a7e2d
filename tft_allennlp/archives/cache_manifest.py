"""
The manifest of an encoder cache entry (`MANIFEST_FILE`: the archive's SHA-256 and each file's
name, size and SHA-256), written last into a fresh export, and the check of an entry against it
(`entry_problem`), which reads the entry as untrusted input: caches get copied from other people,
so it follows no link and opens nothing outside the entry.

Digests, not sizes and modification times: a same-size change (a bad copy, bit rot, a file
replaced by a tool that keeps times, as `cp -p` and `rsync -t` do) passes a size and time
check. The price is one more read of the entry per process, about what the archive's own digest
(its cache key) already costs: 0.64 s for BERT-base's 440 MB on a 2-core machine, against the
tens of seconds a run spends before its first batch. A digest is no signature: whoever can
rewrite the weights can rewrite the manifest too, so an entry is as trustworthy as whoever can
write the cache; the check stops damage, and changes made without the manifest.
"""

import contextlib
import hashlib
import json
import os
import stat
from typing import IO, Dict, Iterator, Optional

MANIFEST_FILE = ".tft-manifest.json"
"""In an encoder cache entry, written last: what the entry holds."""
_MANIFEST_FORMAT = 1
_MANIFEST_MAX_BYTES = 1 << 20
_MAX_DEPTH = 4  # folders in an entry: an export writes none (sentence-transformers' one level)


def entry_problem(directory: str, archive_digest: str) -> Optional[str]:
    """
    Why the encoder cache entry `directory` cannot be used for the archive whose SHA-256 is
    `archive_digest` (its manifest missing or unreadable, a file missing, added, changed, a link,
    not a plain file), or None when it matches its manifest. Reads the entry as untrusted input:
    no link is followed, no file outside the entry is opened.
    """
    try:
        mode = os.lstat(directory).st_mode
    except FileNotFoundError:
        return "it is missing"
    except OSError as error:
        return f"it cannot be read: {error}"
    if not stat.S_ISDIR(mode):
        return f"it is {'a symbolic link' if stat.S_ISLNK(mode) else 'not a folder'}"
    try:
        files = _plain_files(directory)
        if MANIFEST_FILE not in files:
            return "it has no manifest: written by an older version of the plugin, or by hand"
        manifest = _read_manifest(files.pop(MANIFEST_FILE))
        if manifest is None:
            return f"its manifest {MANIFEST_FILE} is unreadable"
        if manifest["archive_sha256"] != archive_digest:
            return "its manifest is another archive's"
        listed: Dict[str, dict] = manifest["files"]
        missing, extra = sorted(set(listed) - set(files)), sorted(set(files) - set(listed))
        if missing:
            return f"{missing[0]} is missing"
        if extra:
            return f"{extra[0]} is not in its manifest"
        for name in sorted(files):  # sizes first: a cut file shows without reading anything
            size = os.lstat(files[name]).st_size
            if size != listed[name]["size"]:
                return f"{name} has {size} bytes, its manifest {listed[name]['size']}"
        for name in sorted(files):
            with _open_plain_file(files[name]) as handle:
                if sha256(handle) != listed[name]["sha256"]:
                    return f"{name} differs from its manifest's SHA-256"
    except _Untrusted as error:
        return str(error)
    except OSError as error:  # a file that vanished or cannot be read while checked
        return f"it cannot be read: {error}"
    return None


def write_manifest(directory: str, archive_digest: str) -> None:
    """Records the files of the freshly exported `directory` in its manifest, written last and
    atomically (a temporary file renamed over it)."""
    files = {}
    for name, path in sorted(_plain_files(directory).items()):
        with open(path, "rb") as handle:
            files[name] = {"size": os.fstat(handle.fileno()).st_size, "sha256": sha256(handle)}
    manifest = {"format": _MANIFEST_FORMAT, "archive_sha256": archive_digest, "files": files}
    staging = os.path.join(directory, f"{MANIFEST_FILE}.{os.getpid()}.tmp")
    with open(staging, "w") as handle:
        json.dump(manifest, handle, indent=1)
    os.replace(staging, os.path.join(directory, MANIFEST_FILE))


def sha256(handle: IO[bytes]) -> str:
    """The SHA-256 of what is left to read from `handle`, as hex."""
    digest = hashlib.sha256()
    for block in iter(lambda: handle.read(1 << 20), b""):
        digest.update(block)
    return digest.hexdigest()


class _Untrusted(Exception):
    """An entry that holds something that is not a plain folder or file."""


def _plain_files(directory: str, prefix: str = "") -> Dict[str, str]:
    """Relative name (with `/`) -> path of every file under `directory`, following no link;
    `_Untrusted` for a link, anything but folders and plain files, or folders nested deeper
    than an export writes them."""
    if prefix.count("/") > _MAX_DEPTH:
        raise _Untrusted(f"{prefix.rstrip('/')} is more than {_MAX_DEPTH} folders deep")
    files: Dict[str, str] = {}
    with os.scandir(directory) as entries:
        for entry in entries:
            name = prefix + entry.name
            if entry.is_symlink():
                raise _Untrusted(f"{name} is a symbolic link")
            if entry.is_dir(follow_symlinks=False):
                files.update(_plain_files(entry.path, name + "/"))
            elif entry.is_file(follow_symlinks=False):
                files[name] = entry.path
            else:
                raise _Untrusted(f"{name} is not a plain file")
    return files


@contextlib.contextmanager
def _open_plain_file(path: str) -> Iterator[IO[bytes]]:
    """`path` opened for reading, if it is a plain file and not a link at the time it is opened
    (a file swapped for a link or a named pipe after `_plain_files` saw it is refused)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError:
        if os.path.islink(path):
            raise _Untrusted(f"{os.path.basename(path)} is a symbolic link") from None
        raise
    handle = os.fdopen(descriptor, "rb")
    with handle:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise _Untrusted(f"{os.path.basename(path)} is not a plain file")
        yield handle


def _read_manifest(path: str) -> Optional[dict]:
    """The manifest at `path`, or None if it is not one (too large, not JSON, wrong shape)."""
    with _open_plain_file(path) as handle:
        text = handle.read(_MANIFEST_MAX_BYTES + 1)
    try:
        manifest = json.loads(text) if len(text) <= _MANIFEST_MAX_BYTES else None
    except ValueError:
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != _MANIFEST_FORMAT:
        return None
    files = manifest.get("files")
    if not isinstance(manifest.get("archive_sha256"), str) or not isinstance(files, dict):
        return None
    for record in files.values():
        if not (
            isinstance(record, dict)
            and type(record.get("size")) is int
            and isinstance(record.get("sha256"), str)
        ):
            return None
    return manifest
