"""
Where the plugin's components read a pretrained transformer from, so that a model archive is
self-contained and an injection archive can stand for the encoder it trained.

`model_name` in the plugin's configs (the `tft_pretrained_transformer` tokenizer, indexer,
embedder and backbone, and `tft_glue_head`) is a hub name, a local Hugging Face checkpoint
directory, or a model archive (`model.tar.gz`) of this plugin. `transformer_source` turns it into
what to read:

- **Training** (AllenNLP gives every component the serialization directory): the checkpoint's
  files except its weights (config, tokenizer, sentence-transformers modules) are copied to
  `SERIALIZATION_DIR/pretrained_transformers/<key>/`, which the configs' `include_in_archive`
  puts into `model.tar.gz`; the embedder adds the pooler it drops (`POOLER_FILE`), so that
  `tft-export` can write it back.
- **Loading an archive** (`load_archive` gives the extracted archive as serialization directory):
  every component reads that copy instead of `model_name`, and the embedder builds the
  transformer from the copied config without weights, which come from the archive's
  `weights.th`. The archive loads after the checkpoint is deleted, or on another machine.
- **A model archive as `model_name`**: its encoder is exported once, by the same function as
  `allennlp tft-export`, into a cache directory keyed by the archive's SHA-256
  (`$TFT_CACHE/encoders/`, `TFT_CACHE` defaulting to `~/.cache/tft_allennlp`), and read from
  there: injection and fine-tuning are two `allennlp train` commands.

A cache entry is checked before it is used, once per process (`entry_problem`). The export is
written to a staging folder, then its manifest (`MANIFEST_FILE`: the archive's SHA-256 and each
file's name, size and SHA-256), and only then is the folder renamed into place: a killed write
never leaves an entry, and an entry without a manifest is one an older version wrote. An entry
that lacks a file, holds one its manifest does not list, a file whose size or digest differs, a
symbolic link, or anything but folders and plain files is not used but rebuilt from the
archive, with one WARNING line that says why. Caches get copied from other people, so the check
reads an entry as untrusted input: it follows no link and opens nothing outside the entry. A
`TFT_CACHE` that cannot be a folder is a `ConfigurationError` that names it.

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
import logging
import os
import random
import re
import shutil
import stat
import tempfile
from typing import IO, Dict, Iterator, List, Optional, Tuple

import numpy
import safetensors.torch
import torch
import transformers
from allennlp.common.checks import ConfigurationError
from allennlp.models.archival import _WEIGHTS_NAME

from tft_allennlp.common.output_paths import remove_leftovers, staging_name

logger = logging.getLogger(__name__)

ARCHIVED_TRANSFORMERS = "pretrained_transformers"
"""The folder of the serialization directory (and archive) that holds the copies."""
POOLER_FILE = "dropped_pooler.safetensors"
"""The checkpoint's pooler, which the embedder drops from the model, in its copy."""
SENTENCE_TRANSFORMERS_MODULES = "modules.json"
MANIFEST_FILE = ".tft-manifest.json"
"""In an encoder cache entry, written last: what the entry holds (see the module docstring)."""
_MANIFEST_FORMAT = 1
_MANIFEST_MAX_BYTES = 1 << 20
_MAX_DEPTH = 4  # folders in an entry: an export writes none (sentence-transformers' one level)
DEFAULT_CACHE = "~/.cache/tft_allennlp"
_WEIGHT_SUFFIXES = (
    ".safetensors",
    ".bin",
    ".pt",
    ".pth",
    ".th",
    ".h5",
    ".msgpack",
    ".ckpt",
    ".onnx",
    ".ot",
    ".tflite",
    ".pb",
    ".index.json",
)
_exported: Dict[Tuple[str, int, int], str] = {}


def transformer_source(model_name: str, serialization_dir: Optional[str] = None) -> str:
    """
    The directory (or hub name) to load `model_name`'s config and tokenizer from: the archive's
    copy when `serialization_dir` is an extracted archive that holds one, the exported encoder
    when `model_name` is a model archive, else `model_name`. During training (a serialization
    directory that is not an extracted archive) it also copies the files for the archive.
    """
    archived = archived_copy(model_name, serialization_dir)
    if archived is not None:
        return archived
    source = exported_encoder(model_name) if os.path.isfile(model_name) else model_name
    if serialization_dir is not None and not is_extracted_archive(serialization_dir):
        _copy_for_archive(source, copy_directory(model_name, serialization_dir))
    return source


def is_extracted_archive(serialization_dir: str) -> bool:
    """Whether `serialization_dir` is a model archive unpacked by `load_archive`: it holds
    `weights.th`, which training never writes."""
    return os.path.isfile(os.path.join(serialization_dir, _WEIGHTS_NAME))


def copy_directory(model_name: str, serialization_dir: str) -> str:
    """Where the copy of `model_name`'s files lives in `serialization_dir`."""
    stem = os.path.basename(os.path.normpath(model_name))
    stem = re.sub(r"\.tar\.gz$", "", stem)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem)[:48] or "model"
    digest = hashlib.sha256(model_name.encode("utf-8")).hexdigest()[:12]
    return os.path.join(serialization_dir, ARCHIVED_TRANSFORMERS, f"{stem}-{digest}")


def archived_copy(model_name: str, serialization_dir: Optional[str]) -> Optional[str]:
    """The copy of `model_name`'s files in the extracted archive `serialization_dir`, if any."""
    if serialization_dir is None or not is_extracted_archive(serialization_dir):
        return None
    directory = copy_directory(model_name, serialization_dir)
    return directory if os.path.isdir(directory) else None


def keep_dropped_pooler(
    model_name: str, serialization_dir: Optional[str], pooler: torch.nn.Module
) -> None:
    """Stores the pooler that the embedder drops in the copy of `model_name`'s files (training
    only; once per serialization directory)."""
    if serialization_dir is None or is_extracted_archive(serialization_dir):
        return
    path = os.path.join(copy_directory(model_name, serialization_dir), POOLER_FILE)
    if os.path.exists(path):
        return
    state = {
        name: tensor.detach().cpu().contiguous() for name, tensor in pooler.state_dict().items()
    }
    staging = f"{path}.{os.getpid()}.tmp"
    safetensors.torch.save_file(state, staging)
    os.replace(staging, path)


def archived_pooler(directory: str) -> Optional[Dict[str, torch.Tensor]]:
    """The pooler weights kept by `keep_dropped_pooler` in the copy `directory`, if any."""
    path = os.path.join(directory, POOLER_FILE)
    return safetensors.torch.load_file(path) if os.path.isfile(path) else None


def sentence_transformers_modules(directory: str) -> Optional[List[dict]]:
    """The module list of a sentence-transformers model directory (`modules.json`), if any."""
    path = os.path.join(directory, SENTENCE_TRANSFORMERS_MODULES)
    if not os.path.isfile(path):
        return None
    with open(path) as handle:
        return json.load(handle)


def exported_encoder(archive_file: str) -> str:
    """
    The encoder of the model archive `archive_file` as a Hugging Face checkpoint directory,
    written by `tft-export`'s own function the first time it is asked for, into
    `$TFT_CACHE/encoders/<SHA-256 of the archive>`, and written again whenever that entry fails
    `entry_problem`'s check. A `ConfigurationError` naming `TFT_CACHE` when the cache cannot be
    a folder or cannot be written.
    """
    status = os.stat(archive_file)
    key = (os.path.realpath(archive_file), status.st_size, status.st_mtime_ns)
    if key in _exported:
        return _exported[key]
    with open(archive_file, "rb") as handle:
        archive_digest = _sha256(handle)
    directory = os.path.join(_encoders_directory(), archive_digest[:32])
    problem = entry_problem(directory, archive_digest)
    if problem is not None:
        if os.path.lexists(directory):
            logger.warning(
                "The cached encoder %s is not used (%s); rebuilding it from %s",
                directory,
                problem,
                archive_file,
            )
        _build_entry(archive_file, archive_digest, directory)
    _exported[key] = directory
    return directory


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
                if _sha256(handle) != listed[name]["sha256"]:
                    return f"{name} differs from its manifest's SHA-256"
    except _Untrusted as error:
        return str(error)
    except OSError as error:  # a file that vanished or cannot be read while checked
        return f"it cannot be read: {error}"
    return None


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


def write_manifest(directory: str, archive_digest: str) -> None:
    """Records the files of the freshly exported `directory` in its manifest, written last and
    atomically (a temporary file renamed over it)."""
    files = {}
    for name, path in sorted(_plain_files(directory).items()):
        with open(path, "rb") as handle:
            files[name] = {"size": os.fstat(handle.fileno()).st_size, "sha256": _sha256(handle)}
    manifest = {"format": _MANIFEST_FORMAT, "archive_sha256": archive_digest, "files": files}
    staging = os.path.join(directory, f"{MANIFEST_FILE}.{os.getpid()}.tmp")
    with open(staging, "w") as handle:
        json.dump(manifest, handle, indent=1)
    os.replace(staging, os.path.join(directory, MANIFEST_FILE))


def _build_entry(archive_file: str, archive_digest: str, directory: str) -> None:
    """Exports the encoder into a staging folder beside `directory`, writes its manifest, and
    renames it to `directory`, first moving aside (and then deleting) an entry there that fails
    the check; an entry that another process completed first and that passes it wins."""
    # Imported here: the command module imports the models, which import this module.
    from tft_allennlp.commands.export import export_encoder

    encoders = os.path.dirname(directory)
    # Named after this process, so that the next process removes what a killed one left.
    staging = staging_name(encoders)
    try:
        remove_leftovers(encoders)
        shutil.rmtree(staging, ignore_errors=True)
        os.mkdir(staging)
    except OSError as error:
        raise _cache_error(error) from None
    try:
        logger.info("Exporting the encoder of %s to %s", archive_file, directory)
        encoder = os.path.join(staging, "encoder")
        # Building the archive's model draws random numbers (its heads' initialisation): the
        # run that asked for the encoder must go on as if the export had not happened.
        with _random_state_kept():
            export_encoder(archive_file, encoder)
        write_manifest(encoder, archive_digest)
        for attempt in range(3):
            try:
                os.rename(encoder, directory)
                return
            except OSError as error:
                failure = error
            if entry_problem(directory, archive_digest) is None:
                return  # another process put a sound entry there first
            try:
                os.rename(directory, os.path.join(staging, f"untrusted-{attempt}"))
            except FileNotFoundError:
                pass
            except OSError as error:
                raise _cache_error(error, f"cannot replace the cache entry {directory}") from None
        raise _cache_error(failure, f"cannot write the cache entry {directory}")
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _sha256(handle: IO[bytes]) -> str:
    digest = hashlib.sha256()
    for block in iter(lambda: handle.read(1 << 20), b""):
        digest.update(block)
    return digest.hexdigest()


def _encoders_directory() -> str:
    """`$TFT_CACHE/encoders`, made if need be; a `ConfigurationError` naming `TFT_CACHE` when it
    cannot be."""
    encoders = os.path.join(cache_directory(), "encoders")
    try:
        os.makedirs(encoders, exist_ok=True)
    except OSError as error:
        raise _cache_error(error) from None
    return encoders


def _cache_error(error: OSError, doing: Optional[str] = None) -> ConfigurationError:
    """One line naming `TFT_CACHE` (its default folder, when unset), what is wrong and the fix."""
    cache = cache_directory()
    if os.environ.get("TFT_CACHE"):
        named, fix, default = f"TFT_CACHE={cache}", "point it at", f" (default {DEFAULT_CACHE})"
    else:
        named, fix, default = (
            f"the cache folder {cache} (TFT_CACHE is unset)",
            "set TFT_CACHE to",
            "",
        )
    blocker = _first_existing(cache)
    if not os.path.isdir(blocker):
        file = "" if blocker == cache else f" ({blocker} is a file)"
        return ConfigurationError(f"{named} is not a folder{file}; {fix} a folder{default}")
    encoders = os.path.join(cache, "encoders")
    if os.path.lexists(encoders) and not os.path.isdir(encoders):
        return ConfigurationError(
            f"{named} holds a file {encoders} where its encoders folder goes; remove it, or "
            f"{fix} another folder"
        )
    doing = doing or f"cannot write {error.filename or encoders}"
    return ConfigurationError(
        f"{named}: {doing}: {error.strerror or error}; {fix} a folder you can write{default}"
    )


def _first_existing(path: str) -> str:
    """`path`, or its nearest parent that exists."""
    while not os.path.lexists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return path


@contextlib.contextmanager
def _random_state_kept() -> Iterator[None]:
    """Python's, numpy's and torch's (CPU and CUDA) random states, restored on exit."""
    python_state, numpy_state = random.getstate(), numpy.random.get_state()
    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_initialized() else []
    with torch.random.fork_rng(devices=devices):
        try:
            yield
        finally:
            random.setstate(python_state)
            numpy.random.set_state(numpy_state)


def cache_directory() -> str:
    """`$TFT_CACHE`, or `~/.cache/tft_allennlp` (under `$XDG_CACHE_HOME` where set)."""
    if os.environ.get("TFT_CACHE"):
        return os.environ["TFT_CACHE"]
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "tft_allennlp")


def _copy_for_archive(source: str, target: str) -> None:
    """Copies `source`'s files except the transformer's weights to `target`, unless there."""
    if os.path.isdir(target):
        return
    os.makedirs(os.path.dirname(target), exist_ok=True)
    staging = tempfile.mkdtemp(dir=os.path.dirname(target), prefix=".staging-")
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(staging, 0o777 & ~umask)  # mkdtemp's 0700 would travel in the archive
    try:
        if os.path.isdir(source):
            _copy_files(source, staging)
        else:
            # A hub name: the files as transformers reads them, and any sentence-transformers
            # files already in its local snapshot.
            transformers.AutoConfig.from_pretrained(source).save_pretrained(staging)
            transformers.AutoTokenizer.from_pretrained(source).save_pretrained(staging)
            snapshot = os.path.dirname(transformers.utils.cached_file(source, "config.json"))
            _copy_sentence_transformers_files(snapshot, staging)
        _rename_unless_there(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _copy_files(source: str, target: str) -> None:
    for name in sorted(os.listdir(source)):
        path = os.path.join(source, name)
        if not name.startswith(".") and os.path.isfile(path) and not _is_weights(name):
            shutil.copyfile(path, os.path.join(target, name))
    _copy_sentence_transformers_files(source, target)


def _copy_sentence_transformers_files(source: str, target: str) -> None:
    """The module folders of a sentence-transformers model (pooling, normalisation, dense
    layers, with their weights), the transformer's own excepted."""
    for name in ("modules.json", "sentence_bert_config.json", "config_sentence_transformers.json"):
        path = os.path.join(source, name)
        if os.path.isfile(path) and not os.path.exists(os.path.join(target, name)):
            shutil.copyfile(path, os.path.join(target, name))
    for module in sentence_transformers_modules(source) or []:
        folder = module.get("path", "")
        if folder and not module.get("type", "").endswith(".Transformer"):
            if os.path.isdir(os.path.join(source, folder)):
                shutil.copytree(os.path.join(source, folder), os.path.join(target, folder))


def _is_weights(name: str) -> bool:
    return name.endswith(_WEIGHT_SUFFIXES)


def _rename_unless_there(staging: str, target: str) -> None:
    """Moves `staging` to `target`; a `target` that another process completed first wins."""
    try:
        os.rename(staging, target)
    except OSError:
        if not os.path.isdir(target):
            raise
