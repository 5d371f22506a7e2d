"""
`allennlp train` reuses a directory a failed start left, and holds its directory's lock: what
`tft_allennlp.training.serialization_dir` describes, put in place. `install` wraps AllenNLP's
`allennlp.training.util.create_serialization_dir`, `install_lock` wraps
`allennlp.commands.train.train_model` in the directory's `FolderLock` (installed after every
other wrapper of it, so that it is the outermost). Remove when AllenNLP reuses such a directory,
checks what `--force` deletes and locks it (`tests/training/serialization_dir_test.py`,
`tests/common/folder_lock_test.py`, `benchmarks/run_folder_race.py`).
"""

import logging
import os
from typing import Any, Callable, Union

from allennlp.common.checks import ConfigurationError

from tft_host_patches import replace

logger = logging.getLogger("tft_allennlp.training.serialization_dir")

PATCH = "serialization_dir"
LOCK_PATCH = "serialization_dir_lock"


def install() -> None:
    """Wraps AllenNLP's `create_serialization_dir` (as `allennlp train` calls it)."""
    from allennlp.training import util as training_util

    from tft_allennlp.training.serialization_dir import (
        check_reads_nothing_inside,
        clear,
        left_by_a_failed_start,
        run_contents,
    )

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

    from tft_allennlp.common.folder_lock import FolderLock

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
