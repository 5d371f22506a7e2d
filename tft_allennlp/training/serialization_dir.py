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
"""

import fnmatch
import logging
import os
import shutil
from typing import Any, Callable, Iterator, Optional, Tuple, Union

from allennlp.common.checks import ConfigurationError

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


def left_by_a_failed_start(directory: str) -> bool:
    """Whether `directory` holds only what a run writes before it saves anything trained."""
    names = os.listdir(directory)
    return bool(names) and all(
        any(fnmatch.fnmatch(name, pattern) for pattern in LEFT_BY_A_FAILED_START) for name in names
    )


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


def install() -> None:
    """Wraps AllenNLP's `create_serialization_dir` (as `allennlp train` calls it)."""
    from allennlp.training import util as training_util

    create: Callable[..., Any] = training_util.create_serialization_dir
    if getattr(create, "__name__", "") == "_create_serialization_dir":
        return

    def _create_serialization_dir(
        params: Any, serialization_dir: Union[str, "os.PathLike[str]"], recover: bool, force: bool
    ) -> None:
        serialization_dir = str(serialization_dir)
        exists = os.path.isdir(serialization_dir) and os.listdir(serialization_dir)
        if exists:
            check_reads_nothing_inside(params, serialization_dir, "--force" if force else None)
        if exists and not (recover or force):
            if not left_by_a_failed_start(serialization_dir):
                raise ConfigurationError(
                    f"Serialization directory {serialization_dir} already holds a run: add "
                    "--recover to continue it, --force to delete it and start again, or give "
                    "another -s directory."
                )
            logger.warning(
                "%s holds only the start of a run that trained nothing (%s): starting again there.",
                serialization_dir,
                ", ".join(sorted(os.listdir(serialization_dir))),
            )
            shutil.rmtree(serialization_dir)
        create(params, serialization_dir, recover, force)

    training_util.create_serialization_dir = _create_serialization_dir
