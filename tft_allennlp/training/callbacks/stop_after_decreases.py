from typing import TYPE_CHECKING, Any, Dict, Optional

from allennlp.training.callbacks.callback import TrainerCallback

if TYPE_CHECKING:  # for annotations only
    from allennlp.training import GradientDescentTrainer


@TrainerCallback.register("tft_stop_after_decreases")
class StopAfterDecreases(TrainerCallback):
    """
    Stops training once a validation metric has decreased `decreases` times from one
    validation to the next: the paper's rule, "early stopping at the second decrease of the
    dev phrasal accuracy". (AllenNLP's `patience` counts validations without a new best, which
    is a different rule.) Decreases are counted over the whole run, not only consecutive ones,
    and survive `--recover`: a run recovered after it had stopped trains no further.

    AllenNLP 2.10 gives callbacks no way to stop training, so this sets the trainer's metric
    tracker to zero patience, which ends training after the current epoch.

    Registered as a `TrainerCallback` with name "tft_stop_after_decreases".

    # Parameters

    serialization_dir : `str`
        Supplied by the trainer.
    metric : `str`, optional (default = `"phrase_accuracy"`)
        A validation metric name, without the `validation_` prefix.
    decreases : `int`, optional (default = `2`)
    """

    def __init__(
        self, serialization_dir: str, metric: str = "phrase_accuracy", decreases: int = 2
    ) -> None:
        super().__init__(serialization_dir)
        self._metric = metric
        self._decreases = decreases
        self._previous: Optional[float] = None
        self._seen_decreases = 0

    def on_start(
        self, trainer: "GradientDescentTrainer", is_primary: bool = True, **kwargs
    ) -> None:
        if self._previous is not None and self._seen_decreases >= self._decreases:
            # Recovered after the rule had stopped training: AllenNLP would train another epoch.
            trainer._metric_tracker._patience = 0
            trainer._num_epochs = trainer._start_after_epochs_completed

    def on_epoch(
        self,
        trainer: "GradientDescentTrainer",
        metrics: Dict[str, Any],
        epoch: int,
        is_primary: bool = True,
        **kwargs,
    ) -> None:
        value = metrics.get(f"validation_{self._metric}")
        if value is None:
            return
        if self._previous is not None and value < self._previous:
            self._seen_decreases += 1
        self._previous = float(value)
        if self._seen_decreases >= self._decreases:
            trainer._metric_tracker._patience = 0

    def state_dict(self) -> Dict[str, Any]:
        return {"previous": self._previous, "seen_decreases": self._seen_decreases}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self._previous = state_dict["previous"]
        self._seen_decreases = state_dict["seen_decreases"]
