import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.common.testing.distributed_test import run_distributed_test
from allennlp.training.metrics import Metric
from sklearn.metrics import matthews_corrcoef

from tft_allennlp.metrics.matthews_correlation import MatthewsCorrelation


def one_hot_scores(predicted, num_classes):
    return torch.nn.functional.one_hot(torch.tensor(predicted), num_classes).float()


def test_hand_computed_binary_value():
    # gold 1 1 1 0 0, predicted 1 1 0 0 1: TP=2 FN=1 TN=1 FP=1,
    # MCC = (2*1 - 1*1) / sqrt(3*2*3*2) = 1/6.
    metric = Metric.from_params(Params({"type": "tft_matthews_correlation"}))
    metric(one_hot_scores([1, 1, 0, 0, 1], 2), torch.tensor([1, 1, 1, 0, 0]))
    assert metric.get_metric() == pytest.approx(1 / 6)


@pytest.mark.parametrize("num_classes", [2, 3, 5])
def test_matches_sklearn_over_several_batches_with_mask(num_classes):
    generator = torch.Generator().manual_seed(num_classes)
    metric = MatthewsCorrelation()
    gold_all, predicted_all = [], []
    for _ in range(4):
        scores = torch.randn(8, 3, num_classes, generator=generator)
        gold = torch.randint(num_classes, (8, 3), generator=generator)
        mask = torch.rand(8, 3, generator=generator) > 0.3
        metric(scores, gold, mask)
        gold_all += gold[mask].tolist()
        predicted_all += scores.argmax(-1)[mask].tolist()
    assert metric.get_metric(reset=True) == pytest.approx(
        matthews_corrcoef(gold_all, predicted_all)
    )
    assert metric.get_metric() == 0.0


def test_undefined_value_is_zero_like_sklearn():
    metric = MatthewsCorrelation()
    metric(one_hot_scores([1, 1, 1], 2), torch.tensor([0, 1, 1]))
    assert matthews_corrcoef([0, 1, 1], [1, 1, 1]) == 0.0
    assert metric.get_metric() == 0.0
    assert isinstance(metric.get_metric(), float)


def test_rejects_inconsistent_input():
    metric = MatthewsCorrelation()
    with pytest.raises(ConfigurationError, match="gold labels must be in"):
        metric(one_hot_scores([0, 1], 2), torch.tensor([0, 2]))
    metric(one_hot_scores([0, 1], 2), torch.tensor([0, 1]))
    with pytest.raises(ConfigurationError, match="Got 3 classes after 2"):
        metric(one_hot_scores([0, 1], 3), torch.tensor([0, 1]))


def _distributed_worker(global_rank, world_size, gpu_id, scores, gold, expected):
    metric = MatthewsCorrelation()
    half = len(gold) // world_size
    part = slice(global_rank * half, (global_rank + 1) * half)
    metric(scores[part], gold[part])
    assert metric.get_metric() == pytest.approx(expected)


def test_distributed_value_is_the_value_over_all_workers():
    generator = torch.Generator().manual_seed(0)
    scores = torch.randn(40, 2, generator=generator)
    gold = torch.randint(2, (40,), generator=generator)
    expected = matthews_corrcoef(gold.tolist(), scores.argmax(-1).tolist())
    run_distributed_test([-1, -1], _distributed_worker, scores, gold, expected)


def test_masked_padding_labels_are_ignored_not_rejected():
    # Padding positions carry gold label -1, as the readers' padded label lists do.
    metric = MatthewsCorrelation()
    scores = one_hot_scores([1, 1, 0, 0, 1, 0], 2)
    gold = torch.tensor([1, 1, 1, 0, -1, -1])
    metric(scores, gold, mask=gold >= 0)
    assert metric.get_metric() == pytest.approx(matthews_corrcoef([1, 1, 1, 0], [1, 1, 0, 0]))
    with pytest.raises(ConfigurationError, match="gold labels must be in"):
        metric(scores, gold)  # unmasked, -1 is an error
