from typing import List, Optional

import torch
import torch.distributed as dist
from allennlp.common.util import is_distributed
from allennlp.nn.util import distributed_device
from allennlp.training.metrics.metric import Metric

from tft_allennlp.metrics.correlation_metric import CorrelationMetric, unmasked_values


@Metric.register("tft_spearman_correlation")
class SpearmanCorrelation(CorrelationMetric):
    """
    Spearman's rank correlation between predictions and gold scores, GLUE's second metric for
    STS-B: Pearson's correlation of the ranks, ties given their average rank (as
    `scipy.stats.spearmanr` does).

    Ranks need every example at once, so each worker keeps its own predictions and gold scores;
    `get_metric` gathers all workers' values into a temporary copy and leaves its own state as it
    was, so it can be called after every batch (as the trainer does) without counting anything
    twice. (AllenNLP 2.10's `SpearmanCorrelation` appends the gathered values to its state on
    every call.) It is 0.0 when undefined: fewer than two examples, or constant predictions or
    gold scores.

    Registered as a `Metric` with name "tft_spearman_correlation".
    """

    def __init__(self) -> None:
        self._predictions: List[torch.Tensor] = []
        self._gold: List[torch.Tensor] = []

    def _add(
        self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: Optional[torch.Tensor]
    ) -> None:
        x, y = unmasked_values(predictions, gold_labels, mask)
        self._predictions.append(x)
        self._gold.append(y)

    def get_metric(self, reset: bool = False) -> float:
        # Shape: (2, num_examples), predictions then gold scores.
        values = torch.stack(
            [
                torch.cat(self._predictions or [torch.zeros(0, dtype=torch.float64)]),
                torch.cat(self._gold or [torch.zeros(0, dtype=torch.float64)]),
            ]
        )
        if is_distributed():
            values = _gather_columns(values)
        if reset:
            self.reset()
        if values.size(1) < 2:
            return 0.0
        ranks = torch.stack([_average_ranks(row) for row in values])
        ranks = ranks - ranks.mean(dim=1, keepdim=True)
        norms = ranks.norm(dim=1)
        if (norms == 0).any():
            return 0.0
        return float((ranks[0] * ranks[1]).sum() / (norms[0] * norms[1]))

    def reset(self) -> None:
        self._predictions = []
        self._gold = []


def _average_ranks(values: torch.Tensor) -> torch.Tensor:
    """1-based ranks of `values` (shape `(n,)`), tied values sharing the mean of their ranks."""
    sorted_values, order = torch.sort(values, stable=True)
    # Shape: (n,): True where a new run of equal values starts.
    starts = torch.ones_like(sorted_values, dtype=torch.bool)
    starts[1:] = sorted_values[1:] != sorted_values[:-1]
    run_ids = torch.cumsum(starts.long(), dim=0) - 1
    positions = torch.arange(1, len(values) + 1, dtype=torch.float64)
    run_sums = torch.zeros(int(run_ids[-1]) + 1, dtype=torch.float64).index_add_(
        0, run_ids, positions
    )
    run_sizes = torch.bincount(run_ids).double()
    ranks = torch.empty_like(positions)
    ranks[order] = (run_sums / run_sizes)[run_ids]
    return ranks


def _gather_columns(values: torch.Tensor) -> torch.Tensor:
    """Concatenates the `(rows, n_i)` tensors of all workers along dim 1 (n_i may differ)."""
    device = distributed_device()
    # Shape: (1,)
    size = torch.tensor([values.size(1)], device=device)
    sizes = [torch.zeros_like(size) for _ in range(dist.get_world_size())]
    dist.all_gather(sizes, size)
    longest = int(max(int(s) for s in sizes))
    padded = torch.zeros(values.size(0), longest, dtype=values.dtype, device=device)
    padded[:, : values.size(1)] = values.to(device)
    gathered = [torch.zeros_like(padded) for _ in sizes]
    dist.all_gather(gathered, padded)
    return torch.cat([part[:, : int(s)] for part, s in zip(gathered, sizes)], dim=1).cpu()
