import json
import logging
import os
from typing import TYPE_CHECKING, Any, Dict, Optional

from allennlp.training.callbacks.callback import TrainerCallback

if TYPE_CHECKING:  # for annotations only
    from allennlp.training import GradientDescentTrainer

logger = logging.getLogger(__name__)


@TrainerCallback.register("tft_recover_finished_run")
class RecoverFinishedRun(TrainerCallback):
    """
    Makes `allennlp train --recover` of a run whose training had already ended (killed while
    `model.tar.gz` was written, or after early stopping) end as the uninterrupted run did.

    AllenNLP 2.10 has two gaps there. It trains on past an early stop: the stopping rule is
    checked only after an epoch it trains, so a recovered run that had stopped early trains
    another epoch (this callback covers AllenNLP's `patience`; `tft_stop_after_decreases`
    covers its own rule). And its `metrics.json` then holds only the `best_*` keys, because the
    last epoch's `training_*` and `validation_*` metrics exist only in memory; this callback
    takes them from that epoch's `metrics_epoch_N.json`.

    Registered as a `TrainerCallback` with name "tft_recover_finished_run".

    # Parameters

    serialization_dir : `str`
        Supplied by the trainer.
    """

    def on_start(
        self, trainer: "GradientDescentTrainer", is_primary: bool = True, **kwargs
    ) -> None:
        epochs_completed = trainer._start_after_epochs_completed
        if epochs_completed and trainer._metric_tracker.should_stop_early():
            logger.info("Recovered a run that had stopped early after %d epochs.", epochs_completed)
            trainer._num_epochs = epochs_completed

    def on_end(
        self,
        trainer: "GradientDescentTrainer",
        metrics: Optional[Dict[str, Any]] = None,
        epoch: Optional[int] = None,
        is_primary: bool = True,
        **kwargs,
    ) -> None:
        epochs_completed = trainer._start_after_epochs_completed
        if not is_primary or metrics is None or "epoch" in metrics or not epochs_completed:
            return  # training failed, or this process trained at least one epoch
        path = os.path.join(self.serialization_dir, f"metrics_epoch_{epochs_completed - 1}.json")
        if not os.path.isfile(path):
            logger.warning("%s is missing: metrics.json keeps only the best_* metrics.", path)
            return
        with open(path, encoding="utf-8") as handle:
            last_epoch = json.load(handle)
        for key, value in last_epoch.items():
            metrics.setdefault(key, value)
