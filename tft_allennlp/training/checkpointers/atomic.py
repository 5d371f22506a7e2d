import logging
import os
from typing import Any, List, Optional, Tuple, Union

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.nn import util as nn_util
from allennlp.training.checkpointer import Checkpointer
from allennlp.training.trainer import Trainer, TrainerCheckpoint

from tft_allennlp.common.atomic_files import (
    link_atomically,
    remove_drafts,
    same_content,
    save_torch_atomically,
)
from tft_allennlp.training.stop_signals import StopRequest, stop

logger = logging.getLogger(__name__)

# In the training state: the checkpoint (epochs, batches) whose model state `best.th` holds.
BEST_CHECKPOINT = "tft_best_checkpoint"


@Checkpointer.register("tft_atomic")
class AtomicCheckpointer(Checkpointer):
    """
    AllenNLP's checkpointer, with every checkpoint file written atomically, and the best model
    and the training state kept as one consistent step.

    Each file is written to a draft in the serialization directory, flushed to disk, then
    renamed over its name; the model state first, the training state last, so that the
    training state's rename commits the checkpoint. A process killed at any instant leaves each
    checkpoint either complete or absent, never a truncated `model_state_e1_b0.th` that
    `--recover` would fail to unpickle. Older checkpoints are removed (by
    `keep_most_recent_by_count`) only after the new one is complete.

    The end-of-epoch checkpoint of the best epoch so far is always written (also with
    `save_completed_epochs: false`) and kept while that epoch is the best, whatever the
    `keep_most_recent_*` settings; the training state records it. `best.th` is then derived
    data: AllenNLP replaces it only after the checkpoint, so a kill in between (or while it
    replaces it) would leave an earlier epoch's weights, or none, beside a training state that
    says otherwise. On `--recover`, `best.th` is made that checkpoint's model state again
    before training goes on, and `allennlp train` checks it once more before archiving
    (`tft_host_patches.run_files`). With a moving average, `best.th` holds averaged weights
    that no checkpoint has, and is left to AllenNLP.

    On `--recover` it resumes from the newest checkpoint whose two files load. A model state
    without its training state is a checkpoint the kill interrupted, removed quietly; a damaged
    file (from a crash of AllenNLP's own checkpointer, or a disk error) is named in a warning
    and renamed to `*.th.damaged`, and if no checkpoint loads the error names every damaged
    file. Disk errors name the file being written.

    A SIGTERM or a Ctrl-C stops the run at the end of the batch in training (in validation, at
    the end of the epoch), with a checkpoint there (`tft_allennlp.training.stop_signals`),
    instead of losing what was trained since the last one.

    Besides the best epoch's, it keeps the latest checkpoint only (`keep_most_recent_by_count:
    1`, AllenNLP's default is 2): the best and the latest are what `--recover` needs.

    Registered as a `Checkpointer` with name "tft_atomic"; every config of the plugin uses it.
    It takes AllenNLP's parameters, e.g.
    `-o '{"trainer.checkpointer.save_every_num_seconds": 1800}'`, or
    `"trainer.checkpointer.keep_most_recent_by_count": null` to keep every epoch's.
    """

    _best: Optional[Tuple[int, int]] = None
    # Set by `stop_signals` while the trainer trains.
    stop_request: Optional[StopRequest] = None

    def __init__(
        self,
        serialization_dir: Union[str, os.PathLike],
        keep_most_recent_by_count: Optional[int] = 1,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            serialization_dir, keep_most_recent_by_count=keep_most_recent_by_count, **kwargs
        )

    def maybe_save_checkpoint(
        self, trainer: Trainer, num_epochs_completed: int, num_batches_in_epoch_completed: int
    ) -> bool:
        end_of_epoch = num_batches_in_epoch_completed == 0
        if self.stop_request is not None and (not end_of_epoch or _trains_on(trainer)):
            number = self.stop_request.requested(trainer)
            if number is not None:
                self.save_checkpoint(trainer)
                if end_of_epoch and self._best == (num_epochs_completed, 0) and self._is_primary:
                    # What the trainer does next with the best epoch's checkpoint.
                    best = os.path.join(self._serialization_dir, "best.th")
                    link_atomically(self._model_state_path(*self._best), best)
                stop(trainer, number, self._serialization_dir)
        if num_batches_in_epoch_completed == 0 and _writes_best_weights(trainer):
            self.save_checkpoint(trainer)
            return True
        return super().maybe_save_checkpoint(
            trainer, num_epochs_completed, num_batches_in_epoch_completed
        )

    def save_checkpoint(self, trainer: Trainer) -> None:
        if self._serialization_dir is not None:
            state = trainer.get_checkpoint_state()
            if state is not None:
                point = (
                    state.trainer_state["epochs_completed"],
                    state.trainer_state["batches_in_epoch_completed"],
                )
                if point[1] == 0 and _writes_best_weights(trainer):
                    # The trainer copies this checkpoint's model state to best.th next.
                    self._best = point
                if getattr(trainer, "_moving_average", None) is None:
                    state.trainer_state[BEST_CHECKPOINT] = self._best
                save_torch_atomically(state.model_state, self._model_state_path(*point))
                save_torch_atomically(state.trainer_state, self._training_state_path(*point))
        # AllenNLP's bookkeeping and clean-up; it does not rewrite files that already exist.
        super().save_checkpoint(trainer)

    def _remove_checkpoint(self, epochs_completed: int, batches_in_epoch_completed: int) -> None:
        if (epochs_completed, batches_in_epoch_completed) != self._best:
            super()._remove_checkpoint(epochs_completed, batches_in_epoch_completed)

    def load_checkpoint(self) -> Optional[TrainerCheckpoint]:
        if self._is_primary:
            remove_drafts(self._serialization_dir)
        damaged: List[str] = []
        for point in sorted(self._find_all_checkpoints(), reverse=True):
            paths = (self._model_state_path(*point), self._training_state_path(*point))
            if not os.path.isfile(paths[1]) and os.path.isfile(paths[0]):
                # Killed between the two files: the checkpoint was never committed.
                if self._is_primary:
                    os.remove(paths[0])
                continue
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
            self._restore_best_weights(trainer_state)
            return TrainerCheckpoint(model_state, trainer_state)
        if damaged:
            raise ConfigurationError(
                f"No checkpoint in {self._serialization_dir} can be loaded; damaged: "
                + ", ".join(damaged)
            )
        return None

    def _restore_best_weights(self, training_state: Any) -> None:
        """`best.th` as the training state says it was: the model state it records."""
        point = training_state.get(BEST_CHECKPOINT)
        if point is None:
            return
        self._best = (int(point[0]), int(point[1]))
        source = self._model_state_path(*self._best)
        best = os.path.join(self._serialization_dir, "best.th")
        if not self._is_primary:
            return
        if not os.path.isfile(source):
            logger.warning(
                "%s, the best epoch's checkpoint, is missing: best.th cannot be checked.", source
            )
            return
        if os.path.isfile(best) and same_content(source, best):
            return
        logger.info("best.th restored from %s, the best epoch's checkpoint.", source)
        link_atomically(source, best)


def _trains_on(trainer: Trainer) -> bool:
    """
    Whether `trainer`, at the end of an epoch, goes on to another. A stop signal received while
    it trained the last one or validated lets the run finish; with a moving average, it waits for
    the next epoch's first batch, after the trainer has written the average's `best.th`.
    """
    tracker = getattr(trainer, "_metric_tracker", None)
    return (
        getattr(trainer, "_epochs_completed") < getattr(trainer, "_num_epochs")
        and not (tracker is not None and tracker.should_stop_early())
        and getattr(trainer, "_moving_average", None) is None
    )


def _writes_best_weights(trainer: Trainer) -> bool:
    """Whether `trainer`, at the end of an epoch, is about to save its weights as `best.th`."""
    tracker = getattr(trainer, "_metric_tracker", None)
    return (
        tracker is not None
        and getattr(trainer, "_should_validate_this_epoch", True)
        and tracker.is_best_so_far()
    )


def _load_or_none(path: str, damaged: List[str]) -> Optional[Any]:
    """The state saved at `path`, or None after adding `path` (and why) to `damaged`."""
    if not os.path.isfile(path):
        damaged.append(f"{path} (missing)")
        return None
    try:
        # Onto the CPU first; `load_state_dict` moves the tensors to the model's device. Tensors
        # and plain values only, whatever the environment says (docs/security.md).
        return torch.load(path, map_location=nn_util.device_mapping(-1), weights_only=True)
    except Exception as error:  # torch raises EOFError, RuntimeError or UnpicklingError
        damaged.append(f"{path} ({type(error).__name__}: {error or 'the file ends early'})")
        return None
