import glob
import logging
import os
import tempfile
from typing import Any, List, Optional, Union

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.nn import util as nn_util
from allennlp.training.checkpointer import Checkpointer
from allennlp.training.trainer import Trainer, TrainerCheckpoint

logger = logging.getLogger(__name__)

_TEMPORARY_PREFIX = ".tft-partial-"


@Checkpointer.register("tft_atomic")
class AtomicCheckpointer(Checkpointer):
    """
    AllenNLP's checkpointer, with every checkpoint file written atomically: to a temporary file
    in the serialization directory, flushed to disk, then renamed over its name. A process
    killed at any instant leaves each checkpoint either complete or absent, never a truncated
    `model_state_e1_b0.th` that `--recover` would fail to unpickle. Older checkpoints are
    removed (by `keep_most_recent_by_count`) only after the new one is complete.

    On `--recover` it resumes from the newest checkpoint whose two files load; a damaged or
    half-present one (from a crash of AllenNLP's own checkpointer, or a disk error) is named
    in a warning and renamed to `*.th.damaged`, and if no checkpoint loads the error names
    every damaged file.

    It keeps the latest checkpoint only (`keep_most_recent_by_count: 1`, AllenNLP's default
    is 2): with the best weights, which the trainer keeps in `best.th` and the archive, a run
    holds the best and the latest, which is what `--recover` needs.

    Registered as a `Checkpointer` with name "tft_atomic"; every config of the plugin uses it.
    It takes AllenNLP's parameters, e.g.
    `-o '{"trainer.checkpointer.save_every_num_seconds": 1800}'`, or
    `"trainer.checkpointer.keep_most_recent_by_count": null` to keep every epoch's.
    """

    def __init__(
        self,
        serialization_dir: Union[str, os.PathLike],
        keep_most_recent_by_count: Optional[int] = 1,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            serialization_dir, keep_most_recent_by_count=keep_most_recent_by_count, **kwargs
        )

    def save_checkpoint(self, trainer: Trainer) -> None:
        if self._serialization_dir is not None:
            state = trainer.get_checkpoint_state()
            if state is not None:
                point = (
                    state.trainer_state["epochs_completed"],
                    state.trainer_state["batches_in_epoch_completed"],
                )
                _save_atomically(state.model_state, self._model_state_path(*point))
                _save_atomically(state.trainer_state, self._training_state_path(*point))
        # AllenNLP's bookkeeping and clean-up; it does not rewrite files that already exist.
        super().save_checkpoint(trainer)

    def load_checkpoint(self) -> Optional[TrainerCheckpoint]:
        self._remove_partial_files()
        damaged: List[str] = []
        for point in sorted(self._find_all_checkpoints(), reverse=True):
            paths = (self._model_state_path(*point), self._training_state_path(*point))
            model_state, trainer_state = [_load_or_none(path, damaged) for path in paths]
            if model_state is None or trainer_state is None:
                continue
            if damaged and self._is_primary:
                logger.warning(
                    "Skipped damaged checkpoint files %s; resuming from %s.",
                    ", ".join(damaged),
                    paths[0],
                )
                # Out of the way, so that the resumed run can write those checkpoints again.
                for newer in sorted(self._find_all_checkpoints()):
                    if newer > point:
                        for path in (
                            self._model_state_path(*newer),
                            self._training_state_path(*newer),
                        ):
                            if os.path.isfile(path):
                                os.replace(path, path + ".damaged")
            return TrainerCheckpoint(model_state, trainer_state)
        if damaged:
            raise ConfigurationError(
                f"No checkpoint in {self._serialization_dir} can be loaded; damaged: "
                + ", ".join(damaged)
            )
        return None

    def _remove_partial_files(self) -> None:
        """Temporary files of a process that was killed while writing a checkpoint."""
        if self._is_primary:
            pattern = os.path.join(self._serialization_dir, _TEMPORARY_PREFIX + "*")
            for path in glob.glob(pattern):
                os.remove(path)


def _save_atomically(state: Any, path: str) -> None:
    if os.path.isfile(path):
        return
    directory, name = os.path.split(path)
    handle, temporary = tempfile.mkstemp(prefix=_TEMPORARY_PREFIX + name, dir=directory)
    os.close(handle)
    try:
        with open(temporary, "wb") as stream:
            torch.save(state, stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        os.remove(temporary)
        raise


def _load_or_none(path: str, damaged: List[str]) -> Optional[Any]:
    """The state saved at `path`, or None after adding `path` (and why) to `damaged`."""
    if not os.path.isfile(path):
        damaged.append(f"{path} (missing)")
        return None
    try:
        # Onto the CPU first; `load_state_dict` moves the tensors to the model's device.
        return torch.load(path, map_location=nn_util.device_mapping(-1))
    except Exception as error:  # torch raises EOFError, RuntimeError or UnpicklingError
        damaged.append(f"{path} ({type(error).__name__}: {error or 'the file ends early'})")
        return None
