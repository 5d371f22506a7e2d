"""
AllenNLP 2.10's `ConfidenceChecksCallback` (on by default: the trainer's `run_confidence_checks`)
puts a forward hook on every module of the model when training starts and takes them off after
the first training batch of epoch 0. A run resumed with `--recover` starts after that batch, so
the hooks stay on for the rest of the run: every module call of every batch is appended to the
check's list (memory that grows with the run), and every layer reports hooks, which sends the
first-token path of BERT-type encoders through the whole last layer
(`modules/token_embedders/eager_attention.py` keeps hooked layers as transformers calls them).
That path draws other dropout masks, so the resumed run no longer ends like the uninterrupted
one.

`install` replaces the callback's `on_start` with one that checks only a run that starts from
scratch; a resumed run was checked when it started. Remove when AllenNLP skips the check on
resumption (`tests/training/callbacks/rng_checkpoint_test.py`, `tests/training/recovery_test.py`,
the confidence-check test beside this module's).
"""

import logging
from typing import TYPE_CHECKING, Any

from allennlp.training.callbacks.confidence_checks import ConfidenceChecksCallback

from tft_host_patches import original, replace

if TYPE_CHECKING:  # for annotations only
    from allennlp.training import GradientDescentTrainer

logger = logging.getLogger(__name__)

PATCH = "confidence_checks"


def _on_start(
    self: ConfidenceChecksCallback,
    trainer: "GradientDescentTrainer",
    is_primary: bool = True,
    **kwargs: Any,
) -> None:
    resumed = (
        trainer._start_after_epochs_completed > 0
        or trainer._start_after_batches_in_epoch_completed > 0
    )
    if not resumed:
        original(ConfidenceChecksCallback, "on_start")(
            self, trainer, is_primary=is_primary, **kwargs
        )
        return
    # As AllenNLP's, but without the hooks: `on_batch` never reaches epoch 0's first batch.
    self.trainer = trainer
    logger.debug("Resumed run: the confidence checks ran when it started.")


def install() -> None:
    """Replaces `ConfidenceChecksCallback.on_start` (once per process)."""
    replace(ConfidenceChecksCallback, "on_start", _on_start, patch=PATCH)
