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
"""

import fnmatch
import logging
import os
import shutil
from typing import Any, Callable, Iterator, List, Optional, Tuple, Union

from allennlp.common.checks import ConfigurationError

from tft_allennlp.common.folder_lock import FolderLock, holder, is_lock_file
from tft_allennlp.common.transformer_source import ARCHIVED_TRANSFORMERS
from tft_host_patches import replace

logger = logging.getLogger(__name__)

PATCH = "serialization_dir"
LOCK_PATCH = "serialization_dir_lock"

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


def install() -> None:
    """Wraps AllenNLP's `create_serialization_dir` (as `allennlp train` calls it)."""
    from allennlp.training import util as training_util

    create: Callable[..., Any] = training_util.create_serialization_dir

    def _create_serialization_dir(
        params: Any, serialization_dir: Union[str, "os.PathLike[str]"], recover: bool, force: bool
    ) -> None:
        serialization_dir = str(serialization_dir)
        if recover and force:
            create(params, serialization_dir, recover, force)  # AllenNLP's refusal
        exists = os.path.isdir(serialization_dir)
        contents = run_contents(serialization_dir) if exists else []
        if contents:
            check_reads_nothing_inside(params, serialization_dir, "--force" if force else None)
        if contents and force:
            clear(serialization_dir)
        elif contents and not recover:
            if not left_by_a_failed_start(serialization_dir):
                raise ConfigurationError(
                    f"Serialization directory {serialization_dir} already holds a run: add "
                    "--recover to continue it, --force to delete it and start again, or give "
                    "another -s directory."
                )
            logger.warning(
                "%s holds only the start of a run that trained nothing (%s): starting again there.",
                serialization_dir,
                ", ".join(sorted(contents)),
            )
            clear(serialization_dir)
        if recover and (contents or not exists):
            create(params, serialization_dir, recover, False)  # checks the run it recovers
        elif recover:
            raise ConfigurationError(
                f"Serialization directory {serialization_dir} holds no run to recover: leave "
                "out --recover to start one."
            )
        else:
            os.makedirs(serialization_dir, exist_ok=True)

    replace(training_util, "create_serialization_dir", _create_serialization_dir, patch=PATCH)


def install_lock() -> None:
    """
    Wraps `allennlp.commands.train.train_model` so that the run holds its serialization
    directory's lock (`FolderLock`) around everything else the plugin and AllenNLP do there;
    installed after the other wrappers of `train_model`, so that it is the outermost.
    """
    import allennlp.commands.train as train_command

    train_model: Callable[..., Any] = train_command.train_model

    def _locked_train_model(
        params: Any,
        serialization_dir: Union[str, "os.PathLike[str]"],
        recover: bool = False,
        **kwargs: Any,
    ) -> Any:
        directory = str(serialization_dir)
        if recover and not os.path.isdir(directory):
            # Nothing to recover: AllenNLP says so, and no directory is made for a lock.
            return train_model(params, serialization_dir, recover=recover, **kwargs)
        with FolderLock(directory):
            return train_model(params, serialization_dir, recover=recover, **kwargs)

    setattr(_locked_train_model, "__wrapped__", train_model)
    replace(train_command, "train_model", _locked_train_model, patch=LOCK_PATCH)
