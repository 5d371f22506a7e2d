"""
Model archives opened as untrusted input: a `model.tar.gz` is made to be shared, so whoever made
it is not always whoever loads it.

AllenNLP's `load_archive` (which `allennlp predict`, `allennlp evaluate`, a `from_archive` model
and the plugin's own commands use) extracts the archive with `tarfile.extractall` and no filter,
evaluates its `config.json` as jsonnet, builds whatever classes the config names (a dotted name
such as `"type": "os.system"` is imported and called), and loads its weights with `torch.load`.
An archive could therefore write any file the user can write, read any file or environment
variable into the config, and run any code. Three guards close that, each before anything of the
archive is written or built:

- **Members** (`extract_archive`): only regular files, directories and links that stay below
  their own folder are extracted; a member with an absolute path or a `..` component, a link
  with an absolute target or a `..` in its target, a device or a named pipe is refused, and the
  archive with it (nothing is extracted: members are staged until all have passed).
  Extraction runs through Python's `"data"` filter as well, which also drops permission bits
  such as set-user-ID.
- **Config** (`check_archive_config`): `config.json` must be plain JSON (what `allennlp train`
  writes; jsonnet's `import`, `importstr` and `std.extVar` would read other files and the
  environment), every `"type"` must be a registered name (registered components come from
  installed packages, which the user chose; a dotted import path could be any callable), and no
  `trust_remote_code` may be true (transformers would run a model repository's own code).
- **Weights** (`load_weights`): `torch.load(..., weights_only=True)`, explicitly, so that no
  environment variable (`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`) turns the unpickler back into one
  that runs code; a refused file is named, with the reason.

Each refusal is an `UntrustedArchiveError` (a `ConfigurationError`) whose one-line message names
the archive and the member or key; the `allennlp` command line prints it as that one line
(`tft_allennlp.common.console`). `install` puts the guards into AllenNLP's loading path
(`allennlp.models.archival.extracted_archive`, `archival._load_dataset_readers` and
`allennlp.nn.util.read_state_dict`, the three functions `load_archive` reaches through its
module at call time; written for AllenNLP 2.10.1, its last release). What the plugin trusts and
what it does not is in docs/security.md.
"""

import contextlib
import gzip
import json
import logging
import os
import pickle
import re
import shutil
import tarfile
import tempfile
import warnings
import zlib
from collections import OrderedDict
from typing import Any, Callable, Dict, Iterator, List, Optional, Union

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.common.registrable import Registrable

import tft_allennlp_lazy

logger = logging.getLogger(__name__)

# Extraction folders of archives being loaded -> the archive file, so that an error about a
# file in the folder names the archive.
_EXTRACTED: Dict[str, str] = {}


class UntrustedArchiveError(ConfigurationError):
    """An archive (or a file in it) that is refused; the message names it and says why."""


def member_problem(member: tarfile.TarInfo) -> Optional[str]:
    """Why `member` may not be extracted from an untrusted archive; None if it may."""
    name = member.name
    if name.startswith(("/", "\\")) or os.path.isabs(name) or re.match(r"^[A-Za-z]:", name):
        return "has an absolute path"
    if ".." in re.split(r"[/\\]", name):
        return "has '..' in its path"
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


def extract_archive(archive_file: str, directory: str, name: Optional[str] = None) -> None:
    """
    Extracts the model archive `archive_file` into `directory`, checking every member
    (`member_problem`): an `UntrustedArchiveError` naming the archive (`name`, if given) and the
    first refused member, with nothing extracted into `directory` (members go to a staging
    folder inside it, and move into it once all have passed). A file that is not a readable tar
    archive is a `ConfigurationError` naming it.
    """
    name = name or archive_file
    created = not os.path.isdir(directory)
    os.makedirs(directory, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".tft-extracting-", dir=directory)
    try:
        # One pass, member by member, into a staging folder: a gzip stream that is listed first
        # and extracted after is decompressed twice (0.4 s of the 90 MB MiniLM archive).
        with tarfile.open(archive_file, "r:*") as tar:
            for member in tar:
                problem = member_problem(member)
                if problem is not None:
                    raise UntrustedArchiveError(_refusal(name, member.name, problem))
                try:
                    tar.extract(member, staging, filter="data")
                except tarfile.FilterError as error:  # what the checks above do not foresee
                    member_name = error.tarinfo.name if error.tarinfo is not None else "?"
                    raise UntrustedArchiveError(_refusal(name, member_name, str(error))) from None
        for entry in os.listdir(staging):
            os.replace(os.path.join(staging, entry), os.path.join(directory, entry))
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as error:
        # tarfile's ReadError lists every compression it tried, one line each: say it in one.
        what = "not a tar file" if isinstance(error, tarfile.ReadError) else str(error)
        raise ConfigurationError(
            f"{name}: not a readable model archive (a model.tar.gz, or a serialization "
            f"directory): {what.splitlines()[0] if what else type(error).__name__}"
        ) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if created and not os.listdir(directory):
            os.rmdir(directory)


def _refusal(archive: str, member: str, problem: str) -> str:
    return (
        f"{archive}: refused: member {member!r} {problem}; a model archive may hold only files, "
        "folders and links inside itself, so nothing was extracted (docs/security.md)"
    )


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
    absolute = os.path.abspath(path)
    for directory, archive in _EXTRACTED.items():
        if absolute.startswith(os.path.join(directory, "")):
            return f"{archive} ({os.path.relpath(absolute, directory)})"
    return str(path)


def check_archive_config(serialization_dir: str) -> Dict[str, Any]:
    """
    The archive's `config.json`, read as plain JSON, once sure that building it runs nothing
    but registered components and no model repository's code; an `UntrustedArchiveError`
    naming the archive and the key otherwise.
    """
    path = os.path.join(serialization_dir, "config.json")
    where = archive_name(path)
    try:
        with open(path, encoding="utf-8") as handle:
            config = json.load(handle)
    except FileNotFoundError:
        raise ConfigurationError(f"{where}: missing; not a model archive") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise UntrustedArchiveError(
            f"{where}: refused: not plain JSON ({error}); an archive's config may not use "
            "jsonnet, which could read other files and environment variables"
        ) from None
    registered = _registered_names()
    for key_path, key, value in _items(config):
        if key == "type" and isinstance(value, str) and not _registered(value, registered):
            raise UntrustedArchiveError(
                f"{where}: refused: {key_path} {value!r} is not a registered component; an "
                "archive may only name registered ones (a dotted name would import and call "
                "any Python code). If you trust it, install the package that registers it"
            )
        if key == "trust_remote_code" and value:
            raise UntrustedArchiveError(
                f"{where}: refused: {key_path} is true; an archive may not make transformers "
                "run a model repository's own code"
            )
    return config


def _registered_names() -> set:
    """Every name registered so far, for any base class."""
    return {name for names in Registrable._registry.values() for name in names}


def _registered(name: str, registered: set) -> bool:
    """
    Whether `name` is in `registered` (names registered so far), after importing what the
    `allennlp` command left to registry lookups if it is not (which then joins `registered`).
    """
    if name not in registered and tft_allennlp_lazy.complete_registry(f"an archive names {name!r}"):
        registered |= _registered_names()
    return name in registered


def _items(value: Any, path: str = "") -> Iterator[tuple]:
    """(dotted key path, key, value) of every key of every object in a JSON value."""
    if isinstance(value, dict):
        for key, item in value.items():
            key_path = f"{path}.{key}" if path else str(key)
            yield key_path, key, item
            yield from _items(item, key_path)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _items(item, f"{path}[{index}]")


def load_weights(path: str, map_location: Any = "cpu") -> Dict[str, torch.Tensor]:
    """
    `torch.load(path, weights_only=True)`: tensors and plain values only. A file that holds
    other objects (a pickle that would run code when loaded) or is not a weights file at all is
    an `UntrustedArchiveError` or a `ConfigurationError` naming it (and its archive).
    """
    try:
        with warnings.catch_warnings():
            # torch's note on a pickle protocol other than its own: the refusal below says more.
            warnings.filterwarnings("ignore", message="Detected pickle protocol")
            return torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as error:
        found = re.search(r"GLOBAL (\S+)|whose module (\S+) is blocked", str(error))
        if found is not None:
            raise UntrustedArchiveError(
                f"{archive_name(path)}: refused: it holds a Python object ("
                f"{found.group(1) or found.group(2)}) that loading would run, not only tensors; "
                "weights are loaded with torch.load(weights_only=True)"
            ) from None
        said = re.search(r"WeightsUnpickler error:\s*([^\n]+)", str(error))
        detail = (said.group(1) if said else str(error).strip().split("\n")[0])[:120]
        raise ConfigurationError(
            f"{archive_name(path)}: not a weights file torch can load with weights_only=True "
            f"({detail})"
        ) from None
    except (OSError, MemoryError):
        raise
    except Exception as error:
        # torch's readers fail on a file of another kind with any error (RuntimeError, EOFError,
        # KeyError from the unpickler's memo, ...): whatever it is, the file is not weights.
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0][:120]
        raise ConfigurationError(
            f"{archive_name(path)}: not a weights file torch can load ({reason})"
        ) from None


def read_state_dict(
    path: Union[os.PathLike, str],
    strip_prefix: Optional[str] = None,
    ignore: Optional[List[str]] = None,
    strict: bool = True,
    cuda_device: int = -1,
) -> Dict[str, torch.Tensor]:
    """
    AllenNLP's `nn.util.read_state_dict` (the same arguments and result), loading through
    `load_weights`.
    """
    from allennlp.nn.util import device_mapping

    if ignore is not None and not isinstance(ignore, list):
        raise ValueError("'ignore' parameter should be a list")
    state = load_weights(str(path), map_location=device_mapping(cuda_device))
    patterns = [re.compile(pattern) for pattern in ignore or []]
    ignore_used = [False] * len(patterns)
    strip_prefix_used = False
    out: Dict[str, torch.Tensor] = OrderedDict()
    for key, tensor in state.items():
        matched = [i for i, pattern in enumerate(patterns) if pattern.match(key)]
        if matched:
            ignore_used[matched[0]] = True
            logger.warning("ignoring %s from state dict", key)
            continue
        if strip_prefix and key.startswith(strip_prefix):
            strip_prefix_used = True
            key = key[len(strip_prefix) :]
            if not key:
                raise ValueError("'strip_prefix' resulted in an empty string for a key")
        out[key] = tensor
    if strict and strip_prefix is not None and not strip_prefix_used:
        raise ValueError(f"'strip_prefix' of '{strip_prefix}' was never used")
    for pattern, used in zip(ignore or [], ignore_used):
        if strict and not used:
            raise ValueError(f"'ignore' pattern '{pattern}' didn't have any matches")
    return out


def _checked_dataset_readers(load: Callable[..., Any]) -> Callable[..., Any]:
    """AllenNLP's `archival._load_dataset_readers`, after `check_archive_config`."""

    def _load_dataset_readers(config: Any, serialization_dir: str) -> Any:
        check_archive_config(serialization_dir)
        return load(config, serialization_dir)

    return _load_dataset_readers


def install() -> None:
    """Puts the three guards into AllenNLP's archive loading (once)."""
    from allennlp.models import archival
    from allennlp.nn import util as nn_util

    if getattr(archival, "_tft_untrusted", False):
        return
    archival.extracted_archive = extracted_archive
    archival._load_dataset_readers = _checked_dataset_readers(archival._load_dataset_readers)
    nn_util.read_state_dict = read_state_dict
    archival._tft_untrusted = True  # type: ignore[attr-defined]
