"""
`allennlp train` into a serialization directory that a failed run left behind.

AllenNLP refuses any non-empty directory without `--recover` or `--force`, so a run that failed
before it trained anything (a wrong path, an unset model variable) blocked the same command from
running again. With the plugin loaded, a directory that holds only what such a run writes
before its first checkpoint (`config.json`, `meta.json`, `out.log`, `vocabulary/`, the copied
`pretrained_transformers/` files) is cleared
and reused, with a warning; a directory with anything else (a checkpoint, weights, metrics, a
file of the user's) is refused as before, with a message that says what to add.

`--force` (which deletes the directory) and `--recover` (which writes into it) never take a
directory that is, or holds, a file or folder the config reads (its data paths, the model
checkpoint, the aligned corpus): that is refused in one line naming the path and its key.

A run holds its directory's lock (`tft_allennlp.common.folder_lock`, `.tft-lock` in it) from
before anything looks at the directory until it ends, `--recover` and `--force` included: a
second `allennlp train` on a directory that a live run holds is refused in one line naming the
directory and that run's process, and touches nothing. Only the launching process takes it:
the workers of distributed training run under its hold. The lock file is no part of the run
(never a leftover, never deleted by `--force`, never archived) and goes when the run ends.

These are the checks; `tft_host_patches/serialization_dir.py` wraps AllenNLP's
`create_serialization_dir` and `train_model` with them.
"""

import fnmatch
import logging
import os
import shutil
from typing import Any, Iterator, List, Optional, Tuple

from allennlp.common.checks import ConfigurationError

from tft_allennlp.common.folder_lock import holder, is_lock_file
from tft_allennlp.common.transformer_source import ARCHIVED_TRANSFORMERS

logger = logging.getLogger(__name__)


# What `allennlp train` writes before its first checkpoint (with the copies of the checkpoint's
# config and tokenizer files that the plugin's components keep for the archive).
LEFT_BY_A_FAILED_START = (
    "config.json",
    "meta.json",
    "out.log",
    "out_worker*.log",
    "vocabulary",
    ARCHIVED_TRANSFORMERS,
)


def run_contents(directory: str) -> List[str]:
    """
    What `directory` holds of a run: its entries but the lock, which every run writes first and
    removes when it ends, and is no part of the run (and the lock's draft,
    `.tft-lock.HOST.PID.tmp`, which only a kill leaves: `folder_lock.is_lock_file`).
    """
    return [name for name in os.listdir(directory) if not is_lock_file(name)]


def left_by_a_failed_start(directory: str) -> bool:
    """
    Whether `directory` holds only what a run writes before it saves anything trained, and no
    live run holds its lock (a run that has only started writes the same files).
    """
    if holder(directory) is not None:
        return False
    names = run_contents(directory)
    return bool(names) and all(
        any(fnmatch.fnmatch(name, pattern) for pattern in LEFT_BY_A_FAILED_START) for name in names
    )


def clear(directory: str) -> None:
    """Deletes what `directory` holds of a run (`run_contents`), keeping the run's lock."""
    for name in run_contents(directory):
        path = os.path.join(directory, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path)


def check_reads_nothing_inside(params: Any, serialization_dir: str, flag: Optional[str]) -> None:
    """
    A `ConfigurationError` when the existing `serialization_dir` is, or holds, a path that the
    config `params` reads (any string value of it that names an existing file or folder, by
    its real path): `--force` would delete it, a run would write beside it and `--recover` into
    it.
    """
    directory = os.path.join(os.path.realpath(serialization_dir), "")
    config = params.as_dict(quiet=True) if hasattr(params, "as_dict") else dict(params)
    for key, value in _string_values(config):
        if not value or not os.path.exists(value):
            continue
        if os.path.join(os.path.realpath(value), "").startswith(directory):
            deleted = f"; {flag} would delete it" if flag == "--force" else ""
            raise ConfigurationError(
                f"Serialization directory {serialization_dir} holds {value}, which the config "
                f"reads ({key}){deleted}: give another -s directory."
            )


def _string_values(value: Any, path: str = "") -> Iterator[Tuple[str, str]]:
    """(dotted key, value) of every string in a config."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _string_values(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _string_values(item, f"{path}[{index}]")
