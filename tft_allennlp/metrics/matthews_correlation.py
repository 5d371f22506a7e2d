from typing import Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.nn.util import dist_reduce_sum
from allennlp.training.metrics.metric import Metric

from tft_allennlp.metrics.correlation_metric import CorrelationMetric


@Metric.register("tft_matthews_correlation")
class MatthewsCorrelation(CorrelationMetric):
    """
    Matthews correlation coefficient of argmax predictions, GLUE's metric for CoLA, in its
    multi-class form (Gorodkin, 2004), which equals the usual binary formula for two classes.

    It accumulates a confusion matrix, the sufficient statistic, and sums it across workers, so
    the value under distributed training is the value over the whole dataset. When the
    coefficient is undefined (all predictions or all gold labels in one class) it is 0.0, as in
    scikit-learn.

    Registered as a `Metric` with name "tft_matthews_correlation".
    """

    def __init__(self) -> None:
        # Shape: (num_classes, num_classes), rows are gold labels, columns predictions.
        self._confusion: Optional[torch.Tensor] = None

    def _add(
        self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: Optional[torch.Tensor]
    ) -> None:
        num_classes = predictions.size(-1)
        if gold_labels.dim() != predictions.dim() - 1:
            raise ConfigurationError(
                f"gold_labels must have one dimension less than predictions, got shapes "
                f"{tuple(gold_labels.shape)} and {tuple(predictions.shape)}"
            )
        # Shape: (num_examples,): the unmasked positions only, so masked padding (-1) is skipped.
        gold = gold_labels.reshape(-1).long()
        predicted = predictions.reshape(-1, num_classes).argmax(-1)
        if mask is not None:
            keep = mask.reshape(-1).bool()
            gold, predicted = gold[keep], predicted[keep]
        if (gold >= num_classes).any() or (gold < 0).any():
            raise ConfigurationError(f"gold labels must be in [0, {num_classes}).")
        if self._confusion is None:
            self._confusion = torch.zeros(num_classes, num_classes, dtype=torch.long)
        elif self._confusion.size(0) != num_classes:
            raise ConfigurationError(
                f"Got {num_classes} classes after {self._confusion.size(0)} in earlier batches."
            )
        cells = torch.bincount(gold * num_classes + predicted, minlength=num_classes**2)
        self._confusion += cells.view(num_classes, num_classes).cpu()

    def get_metric(self, reset: bool = False) -> float:
        if self._confusion is None:
            value = 0.0
        else:
            confusion = dist_reduce_sum(self._confusion).double()
            total = confusion.sum()
            correct = confusion.trace()
            gold_totals = confusion.sum(dim=1)
            predicted_totals = confusion.sum(dim=0)
            covariance = correct * total - (gold_totals * predicted_totals).sum()
            denominator = torch.sqrt(
                (total**2 - (predicted_totals**2).sum()) * (total**2 - (gold_totals**2).sum())
            )
            value = float(covariance / denominator) if denominator > 0 else 0.0
        if reset:
            self.reset()
        return value

    def reset(self) -> None:
        self._confusion = None
