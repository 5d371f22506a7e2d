"""
A model archive of this plugin given as `model_name` (to the `tft_pretrained_transformer`
tokenizer, indexer, embedder and backbone, or `tft_glue_head`): its encoder is exported once, by
the same function as `allennlp tft-export` (`export_encoder`), into a cache directory named by
the first 32 hexadecimal digits of the archive's SHA-256 (`$TFT_CACHE/encoders/`, `TFT_CACHE`
defaulting to `~/.cache/tft_allennlp`), and read from there: injection and fine-tuning are two
`allennlp train` commands. `tft_allennlp.common.transformer_source` reads archives through
`exported_encoder`.

A cache entry is checked before it is used, once per process (`entry_problem`,
`tft_allennlp.archives.cache_manifest`). The export is written to a staging folder, then its
manifest, and only then is the folder renamed into place (the export's own line names the
entry, not the staging folder): a killed write never leaves an entry, and an entry without a
manifest is one an older version wrote. An entry that lacks a file, holds one its manifest does
not list, a file whose size or digest differs, a symbolic link, or anything but folders and
plain files is not used but rebuilt from the archive, with one WARNING line that says why. A
`TFT_CACHE` that cannot be a folder is a `ConfigurationError` that names it.
"""

import contextlib
import logging
import os
import random
import shutil
from typing import Dict, Iterator, Optional, Tuple

import numpy
import torch
from allennlp.common.checks import ConfigurationError

from tft_allennlp.archives import encoder_export
from tft_allennlp.archives.cache_manifest import entry_problem, sha256, write_manifest
from tft_allennlp.archives.encoder_export import export_encoder
from tft_allennlp.common.output_paths import remove_leftovers, staging_name

logger = logging.getLogger(__name__)

DEFAULT_CACHE = "~/.cache/tft_allennlp"
_exported: Dict[Tuple[str, int, int], str] = {}


def exported_encoder(archive_file: str) -> str:
    """
    The encoder of the model archive `archive_file` as a Hugging Face checkpoint directory,
    written by `tft-export`'s own function the first time it is asked for, into
    `$TFT_CACHE/encoders/<first 32 hexadecimal digits of the archive's SHA-256>`, and written
    again whenever that entry fails `entry_problem`'s check. A `ConfigurationError` naming
    `TFT_CACHE` when the cache cannot be a folder or cannot be written.
    """
    status = os.stat(archive_file)
    key = (os.path.realpath(archive_file), status.st_size, status.st_mtime_ns)
    if key in _exported:
        return _exported[key]
    with open(archive_file, "rb") as handle:
        archive_digest = sha256(handle)
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


def cache_directory() -> str:
    """`$TFT_CACHE`, or `~/.cache/tft_allennlp` (under `$XDG_CACHE_HOME` where set)."""
    if os.environ.get("TFT_CACHE"):
        return os.environ["TFT_CACHE"]
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "tft_allennlp")


def _build_entry(archive_file: str, archive_digest: str, directory: str) -> None:
    """Exports the encoder into a staging folder beside `directory`, writes its manifest, and
    renames it to `directory`, first moving aside (and then deleting) an entry there that fails
    the check; an entry that another process completed first and that passes it wins."""
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
        with _random_state_kept(), _naming_the_entry(encoder, directory):
            export_encoder(archive_file, encoder, card=False)  # a cache entry needs no card
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
def _naming_the_entry(staging: str, entry: str) -> Iterator[None]:
    """The export's log lines ("Wrote the encoder of ... to ...") name the cache `entry` it
    becomes, not the `staging` folder it is written in, which is gone afterwards."""

    def rename(record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(entry if arg == staging else arg for arg in record.args)
        return True

    encoder_export.logger.addFilter(rename)
    try:
        yield
    finally:
        encoder_export.logger.removeFilter(rename)


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
