"""
The distributed-safe Pearson and Spearman correlations, against scipy, in one process and
across two gloo workers holding different numbers of examples.
"""

import pytest
import torch
from allennlp.common import Params
from allennlp.common.testing.distributed_test import run_distributed_test
from allennlp.training.metrics import Metric
from scipy.stats import pearsonr, spearmanr

from tft_allennlp.metrics import PearsonCorrelation, SpearmanCorrelation

METRICS = {"tft_pearson_correlation": pearsonr, "tft_spearman_correlation": spearmanr}


def scores(seed: int, size: int, ties: bool = False):
    generator = torch.Generator().manual_seed(seed)
    gold = torch.rand(size, generator=generator) * 5
    predictions = gold + torch.randn(size, generator=generator)
    if ties:  # STS-B gold scores come in steps of 0.2 and repeat
        gold = (gold * 5).round() / 5
        predictions = predictions.round()
    return predictions, gold


def test_hand_computed_values():
    # x = 1 2 3 4, y = 1 3 2 4: Pearson = (sum of centred products 4) / sqrt(5 * 5) = 0.8;
    # the ranks are the values themselves, so Spearman is 0.8 too.
    x, y = torch.tensor([1.0, 2, 3, 4]), torch.tensor([1.0, 3, 2, 4])
    for name in METRICS:
        metric = Metric.from_params(Params({"type": name}))
        metric(x, y)
        assert metric.get_metric() == pytest.approx(0.8)
    # Ties share their mean rank: x ranks 1.5 1.5 3 4, y ranks 1 2 3 4 -> 4.5 / sqrt(4.5 * 5).
    spearman = SpearmanCorrelation()
    spearman(torch.tensor([7.0, 7, 8, 9]), torch.tensor([1.0, 2, 3, 4]))
    assert spearman.get_metric() == pytest.approx(4.5 / (4.5 * 5) ** 0.5)


@pytest.mark.parametrize("name", sorted(METRICS))
@pytest.mark.parametrize("ties", [False, True])
def test_matches_scipy_over_batches_with_a_mask(name, ties):
    predictions, gold = scores(1, 60, ties)
    mask = torch.rand(60, generator=torch.Generator().manual_seed(2)) > 0.25
    metric = Metric.by_name(name)()
    for start in range(0, 60, 16):  # uneven batches: 16, 16, 16, 12
        part = slice(start, start + 16)
        metric(predictions[part], gold[part], mask[part])
    expected = METRICS[name](predictions[mask].double().numpy(), gold[mask].double().numpy())[0]
    value = metric.get_metric()
    assert isinstance(value, float)
    assert value == pytest.approx(expected, abs=1e-12)
    # Reading the metric leaves it unchanged; a reset empties it.
    assert metric.get_metric(reset=True) == value
    assert metric.get_metric() == 0.0


@pytest.mark.parametrize("metric_class", [PearsonCorrelation, SpearmanCorrelation])
def test_undefined_values_are_zero(metric_class):
    metric = metric_class()
    metric(torch.tensor([2.0]), torch.tensor([3.0]))
    assert metric.get_metric() == 0.0  # one example
    metric(torch.tensor([2.0, 2.0]), torch.tensor([1.0, 4.0]))
    assert metric.get_metric() == 0.0  # constant predictions
    with pytest.raises(ValueError, match="same shape"):
        metric(torch.zeros(3), torch.zeros(2))


def _uneven_worker(global_rank, world_size, gpu_id, name, predictions, gold, expected):
    metric = Metric.by_name(name)()
    # Worker 0 holds 37 examples in three batches, worker 1 holds 8 in one.
    bounds = [(0, 15), (15, 30), (30, 37)] if global_rank == 0 else [(37, 45)]
    for start, end in bounds:
        metric(predictions[start:end], gold[start:end])
    for _ in range(3):  # the trainer reads metrics after every batch
        assert metric.get_metric() == pytest.approx(expected, abs=1e-12)
    assert metric.get_metric(reset=True) == pytest.approx(expected, abs=1e-12)
    assert metric.get_metric() == 0.0


@pytest.mark.parametrize("name", sorted(METRICS))
def test_distributed_value_is_the_value_over_all_examples(name):
    predictions, gold = scores(3, 45, ties=True)
    expected = METRICS[name](predictions.double().numpy(), gold.double().numpy())[0]
    run_distributed_test([-1, -1], _uneven_worker, name, predictions, gold, expected)
