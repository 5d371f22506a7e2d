"""
Reports each epoch's validation metric to the Optuna trial that `allennlp tft-tune` is training,
and stops the trial when Optuna's pruner says it will not do well.
"""

import contextlib
import logging
from typing import TYPE_CHECKING, Any, Dict, Iterator, Optional

from allennlp.common.checks import ConfigurationError
from allennlp.training.callbacks.callback import TrainerCallback

if TYPE_CHECKING:  # for annotations only
    import optuna
    from allennlp.training import GradientDescentTrainer

logger = logging.getLogger(__name__)

# The trial `allennlp tft-tune` trains in this process now (`training_trial`).
_current_trial: Optional["optuna.Trial"] = None


@contextlib.contextmanager
def training_trial(trial: "optuna.Trial") -> Iterator[None]:
    """While open, `tft_optuna_pruning` callbacks built in this process report to `trial`."""
    global _current_trial
    _current_trial = trial
    try:
        yield
    finally:
        _current_trial = None


@TrainerCallback.register("tft_optuna_pruning")
class OptunaPruning(TrainerCallback):
    """
    After each epoch, reports the validation metric that picks the best epoch (the trainer's
    `validation_metric`, e.g. `+combined_score`) to the Optuna trial being trained, at the
    epoch as its step; when the study's pruner judges the trial worse than the others at that
    epoch, raises `optuna.TrialPruned`, which ends training and marks the trial PRUNED.
    `allennlp tft-tune` adds it to every trial; a config that names it outside `tft-tune` is
    refused (it has no trial to report to).

    Registered as a `TrainerCallback` with name "tft_optuna_pruning".

    # Parameters

    serialization_dir : `str`
        Supplied by the trainer.
    """

    def __init__(self, serialization_dir: str) -> None:
        super().__init__(serialization_dir)
        if _current_trial is None:
            raise ConfigurationError(
                "the tft_optuna_pruning callback reports to a trial of allennlp tft-tune; "
                "there is none outside it"
            )
        self._trial = _current_trial

    def on_epoch(
        self,
        trainer: "GradientDescentTrainer",
        metrics: Dict[str, Any],
        epoch: int,
        is_primary: bool = True,
        **kwargs,
    ) -> None:
        if not is_primary or epoch < 0:
            return
        import optuna

        name = "validation_" + trainer._metric_tracker.tracked_metrics[0][1]
        if name not in metrics:
            return
        self._trial.report(float(metrics[name]), epoch)
        if self._trial.should_prune():
            logger.info(
                "Trial %d pruned after epoch %d: %s %.4f",
                self._trial.number,
                epoch,
                name,
                metrics[name],
            )
            raise optuna.TrialPruned(f"pruned after epoch {epoch}")
