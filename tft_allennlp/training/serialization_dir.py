"""
`allennlp train` into a serialization directory that a failed run left behind.

AllenNLP refuses any non-empty directory without `--recover` or `--force`, so a run that failed
before it trained anything (a wrong path, an unset model variable) blocked the same command from
running again. With the plugin loaded, a directory that holds only what such a run writes
before its first checkpoint (`config.json`, `meta.json`, `out.log`, `vocabulary/`, the copied
`pretrained_transformers/` files) is cleared
and reused, with a warning; a directory with anything else (a checkpoint, weights, metrics, a
file of the user's) is refused as before, with a message that says what to add.
"""

import fnmatch
import logging
import os
import shutil
from typing import Any, Callable, Union

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
