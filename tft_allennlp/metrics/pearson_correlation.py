from typing import Optional

import torch
from allennlp.nn.util import dist_reduce_sum
from allennlp.training.metrics.metric import Metric

from tft_allennlp.metrics.correlation_metric import CorrelationMetric, unmasked_values


@Metric.register("tft_pearson_correlation")
class PearsonCorrelation(CorrelationMetric):
    """
    Pearson's correlation coefficient between predictions and gold scores, GLUE's metric for
    STS-B, computed over every example seen since the last reset.

    It accumulates the sufficient statistics (count and the sums of x, y, x², y², xy, in float64)
    and sums them across distributed workers, so under distributed training the value is the
    value over the whole dataset, however unevenly the workers' shares are sized. (AllenNLP
    2.10's `PearsonCorrelation` raises under distributed training.) It is 0.0 when undefined:
    fewer than two examples, or constant predictions or gold scores.

    Registered as a `Metric` with name "tft_pearson_correlation".
    """

    def __init__(self) -> None:
        # Shape: (6,): n, sum x, sum y, sum x^2, sum y^2, sum xy.
        self._sums = torch.zeros(6, dtype=torch.float64)

    def _add(
        self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: Optional[torch.Tensor]
    ) -> None:
        x, y = unmasked_values(predictions, gold_labels, mask)
        self._sums += torch.stack(
            [
                torch.tensor(float(x.numel()), dtype=torch.float64),
                x.sum(),
                y.sum(),
                (x * x).sum(),
                (y * y).sum(),
                (x * y).sum(),
            ]
        )

    def get_metric(self, reset: bool = False) -> float:
        n, sum_x, sum_y, sum_xx, sum_yy, sum_xy = dist_reduce_sum(self._sums).tolist()
        if reset:
            self.reset()
        # n times the (co)variances; exact in float64 for scores of the size GLUE has.
        covariance = n * sum_xy - sum_x * sum_y
        variance_x = n * sum_xx - sum_x * sum_x
        variance_y = n * sum_yy - sum_y * sum_y
        if n < 2 or variance_x <= 0 or variance_y <= 0:
            return 0.0
        return float(covariance / (variance_x * variance_y) ** 0.5)

    def reset(self) -> None:
        self._sums = torch.zeros(6, dtype=torch.float64)
