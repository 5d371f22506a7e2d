from dataclasses import dataclass
from typing import Any, Dict, Optional

import torch
from allennlp.common import Registrable
from allennlp.common.checks import ConfigurationError
from allennlp.nn.util import dist_reduce_sum


@dataclass(frozen=True)
class RegularisedBatch:
    """A training batch, as an output regulariser sees it."""

    inputs: Dict[str, Any]
    """The model's forward arguments without the labels, for the extra passes."""
    outputs: Dict[str, torch.Tensor]
    """The model's clean outputs (with gradient)."""
    kinds: Dict[str, str]
    """The regularised output keys: key -> `"classification"` or `"regression"`."""


class OutputRegularizer(Registrable):
    """
    A term added to the training loss of a model wrapped by `tft_smart`: computed from the
    model's regularised outputs and, as the term needs, extra passes of the model over the
    batch's inputs without their labels. SMART's two terms are `tft_smoothness_inducing` and
    `tft_bregman_proximal`; register a subclass for another:

        @OutputRegularizer.register("my_term")
        class MyTerm(OutputRegularizer):
            metric = "my_term"
            def __init__(self, model, weight=1.0): ...
            def term(self, batch): ...

    The wrapper builds its regularisers and passes them `model` (the wrapped model) and `host`
    (the wrapper itself, whose persistent buffers keep a regulariser's state, so that archives
    and `--recover` restore it); a subclass takes the ones it needs, and the config gives its
    own options only. Each reports the mean of its unweighted term, over the batches that
    computed it since the last reset, as the metric `metric`.

    # Parameters

    weight : `float`, optional (default = `1.0`)
        The term's weight in the loss.
    """

    metric = ""
    """The name of the metric that reports the term."""

    def __init__(self, weight: float = 1.0) -> None:
        check_non_negative(weight=weight)
        self.weight = weight
        self._total = 0.0
        self._count = 0

    def start_pass(self) -> None:
        """Called at the start of each training forward pass, before the model runs."""

    def term(self, batch: RegularisedBatch) -> torch.Tensor:
        """The unweighted term of `batch`, shape `()`."""
        raise NotImplementedError

    def weighted_term(self, batch: RegularisedBatch) -> torch.Tensor:
        """`weight * term(batch)`, the term counted in the metric."""
        # Shape: ()
        term = self.term(batch)
        self._total += float(term.detach())
        self._count += 1
        return self.weight * term

    def get_metric(self, reset: bool = False) -> Optional[float]:
        """
        The term's mean since the last reset over all distributed workers, as a Python float;
        None where no worker computed it.
        """
        total = float(dist_reduce_sum(self._total))
        count = int(dist_reduce_sum(self._count))
        if reset:
            self._total, self._count = 0.0, 0
        return total / count if count > 0 else None


def check_non_negative(**options: float) -> None:
    for name, value in options.items():
        if value < 0:
            raise ConfigurationError(f"tft_smart: {name} must be >= 0, not {value}.")


def check_unlabelled(model: torch.nn.Module, output: Dict[str, torch.Tensor]) -> None:
    """An extra pass must compute no loss: it would update the model's metrics."""
    if "loss" in output:
        raise ConfigurationError(
            f"tft_smart: {type(model).__name__} computed a loss in a pass without its label "
            "arguments: name them in `label_arguments`, so that the extra passes update no "
            "metric."
        )
