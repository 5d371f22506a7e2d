from typing import Optional, Tuple

import torch
from allennlp.training.metrics.metric import Metric


class CorrelationMetric(Metric):
    """
    The shared interface of the plugin's correlation metrics (Matthews, Pearson, Spearman): a
    call detaches the batch's predictions, gold labels and mask and hands them to `_add`, which
    accumulates what the metric needs; `get_metric` reduces it over all distributed workers.
    """

    def __call__(
        self,
        predictions: torch.Tensor,
        gold_labels: torch.Tensor,
        mask: Optional[torch.BoolTensor] = None,
    ) -> None:
        """
        # Parameters

        predictions : `torch.Tensor`
            Predicted scores of any shape (Pearson, Spearman), or class scores of shape
            `(batch_size, ..., num_classes)` (Matthews).
        gold_labels : `torch.Tensor`
            Gold scores of the same shape as `predictions`, or class indices of shape
            `(batch_size, ...)`.
        mask : `torch.BoolTensor`, optional
            The shape of `gold_labels`; masked positions are ignored.
        """
        predictions, gold_labels = self.detach_tensors(predictions, gold_labels)
        self._add(predictions, gold_labels, None if mask is None else mask.detach())

    def _add(
        self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: Optional[torch.Tensor]
    ) -> None:
        raise NotImplementedError


def unmasked_values(
    predictions: torch.Tensor, gold_labels: torch.Tensor, mask: Optional[torch.Tensor]
) -> Tuple[torch.Tensor, torch.Tensor]:
    """The unmasked (prediction, gold) values as two float64 vectors on the CPU."""
    if predictions.shape != gold_labels.shape:
        raise ValueError(
            f"predictions and gold_labels must have the same shape, got "
            f"{tuple(predictions.shape)} and {tuple(gold_labels.shape)}"
        )
    # Shape: (num_examples,)
    x = predictions.reshape(-1).double().cpu()
    y = gold_labels.reshape(-1).double().cpu()
    if mask is not None:
        keep = mask.reshape(-1).bool().cpu()
        x, y = x[keep], y[keep]
    return x, y
