import math

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary

from tft_allennlp.modules.phrase_pair_features import PhrasePairFeatures
from tft_allennlp.modules.siamese_losses import SiameseLoss, SoftmaxLoss

# '0' -> 0 and '1' -> 1: the labels namespace is not padded.
VOCAB = Vocabulary(tokens_to_add={"labels": ["0", "1"]})


def build(task: str, **options) -> SiameseLoss:
    """An objective as the model builds it: its options from the config, the rest passed."""
    return SiameseLoss.from_params(
        Params(dict(options)), vocab=VOCAB, task=task, embedding_dim=2, label_namespace="labels"
    )


def test_concat_difference_features():
    features = PhrasePairFeatures.from_params(Params({"type": "tft_concat_difference"}))
    assert features.get_output_dim(2) == 6
    u = torch.tensor([[1.0, -2.0], [0.5, 0.0]])
    v = torch.tensor([[3.0, 4.0], [0.5, -1.5]])
    assert features(u, v).tolist() == [
        [1.0, -2.0, 3.0, 4.0, 2.0, 6.0],
        [0.5, 0.0, 0.5, -1.5, 0.0, 1.5],
    ]


def test_softmax_is_the_default_objective_on_the_concat_difference_features():
    objective = build("mrpc")
    assert isinstance(objective, SoftmaxLoss)
    assert objective._task_output._output_layer.in_features == 6
    output = objective(torch.randn(3, 2), torch.randn(3, 2), torch.tensor([0, 1, 1]))
    assert output["probs"].shape == (3, 2) and output["loss"] > 0
    assert set(objective.get_metrics()) == {"accuracy", "f1", "combined_score"}


# Anchors a_i and candidates b_j: cos(a_0, b_j) = 1, 1/sqrt(2), 0; cos(a_1, b_j) = 0,
# 1/sqrt(2), 1; cos(a_2, b_j) = 1/sqrt(2), 1, 1/sqrt(2). Pairs 0 and 1 are paraphrases.
A = torch.tensor([[2.0, 0.0], [0.0, 3.0], [1.0, 1.0]])
B = torch.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, 0.5]])
PAIRED = torch.tensor([1, 1, 0])


def test_multiple_negatives_ranking_by_hand():
    objective = build("mrpc", type="tft_multiple_negatives_ranking", scale=2.0)
    objective.train()
    output = objective(A, B, PAIRED)
    r = 1 / math.sqrt(2)
    # -[s cos(a_i, b_i) - log sum_j exp(s cos(a_i, b_j))] over the two positive anchors; the
    # negative pair's b_2 is a candidate of both, a_2 is no anchor.
    loss_0 = -(2 * 1.0 - math.log(math.exp(2 * 1.0) + math.exp(2 * r) + math.exp(0.0)))
    loss_1 = -(2 * r - math.log(math.exp(0.0) + math.exp(2 * r) + math.exp(2 * 1.0)))
    assert output["loss"].item() == pytest.approx((loss_0 + loss_1) / 2, abs=1e-6)


def test_multiple_negatives_ranking_scale_defaults_to_20():
    objective = build("mrpc", type="tft_multiple_negatives_ranking")
    output = objective(A[:2], B[:2], PAIRED[:2])
    r = 1 / math.sqrt(2)
    loss_0 = -(20 - math.log(math.exp(20) + math.exp(20 * r)))
    loss_1 = -(20 * r - math.log(math.exp(0.0) + math.exp(20 * r)))
    assert output["loss"].item() == pytest.approx((loss_0 + loss_1) / 2, abs=1e-5)


def test_multiple_negatives_ranking_without_positive_pairs():
    objective = build("mrpc", type="tft_multiple_negatives_ranking")
    objective.train()
    output = objective(A, B, torch.tensor([0, 0, 0]))
    assert output["loss"].item() == 0.0  # still connected to the embeddings, for DDP
    objective.eval()
    assert "loss" not in objective(A, B, torch.tensor([0, 0, 0]))


def test_cosine_mse_against_torch_cosine_similarity():
    torch.manual_seed(0)
    u, v = torch.randn(4, 8), torch.randn(4, 8)
    scores = torch.tensor([4.8, 0.0, 2.5, 5.0])
    objective = build("stsb", type="tft_cosine_mse")
    output = objective(u, v, scores)
    cosine = torch.nn.functional.cosine_similarity(u, v, dim=-1)
    assert torch.allclose(output["cosine"], cosine)
    assert torch.allclose(output["score"], 5 * cosine)
    expected = torch.nn.functional.mse_loss(cosine, scores / 5)
    assert output["loss"].item() == pytest.approx(expected.item(), abs=1e-6)
    assert set(objective.get_metrics()) == {"pearson", "spearman", "combined_score"}


def test_cosine_mse_on_a_paraphrase_task_regresses_on_0_and_1():
    objective = build("mrpc", type="tft_cosine_mse")
    output = objective(A, B, PAIRED)
    r = 1 / math.sqrt(2)
    # Pair cosines 1, 1/sqrt(2), 1/sqrt(2); targets 1, 1, 0.
    expected = ((1 - 1) ** 2 + (r - 1) ** 2 + (r - 0) ** 2) / 3
    assert output["loss"].item() == pytest.approx(expected, abs=1e-6)


def test_cosine_embedding_by_hand():
    objective = build("mrpc", type="tft_cosine_embedding", margin=0.5)
    output = objective(A, B, PAIRED)
    r = 1 / math.sqrt(2)
    # 1 - cos for the two paraphrases, max(0, cos - 0.5) for the other pair.
    expected = ((1 - 1.0) + (1 - r) + max(0.0, r - 0.5)) / 3
    assert output["loss"].item() == pytest.approx(expected, abs=1e-6)
    below_margin = objective(A[:1], torch.tensor([[0.3, 1.0]]), torch.tensor([0]))
    assert below_margin["loss"].item() == 0.0


def test_cosine_threshold_predictions_and_metrics():
    # Default threshold of the cosine embedding loss: (1 + margin) / 2 = 0.75. Pair cosines
    # 1, 1/sqrt(2) ~ 0.707, 1/sqrt(2): predicted 1, 0, 0 against gold 1, 1, 0.
    objective = build("mrpc", type="tft_cosine_embedding", margin=0.5)
    output = objective(A, B, PAIRED)
    assert objective.make_output_human_readable(output)["label"] == ["1", "0", "0"]
    metrics = objective.get_metrics(reset=True)
    assert metrics["accuracy"] == pytest.approx(2 / 3)
    assert metrics["f1"] == pytest.approx(2 / 3)  # precision 1, recall 1/2
    assert metrics["combined_score"] == pytest.approx(2 / 3)
    # An explicit threshold under 1/sqrt(2) calls all three positive.
    lower = build("mrpc", type="tft_multiple_negatives_ranking", threshold=0.7)
    assert lower.make_output_human_readable(lower(A, B))["label"] == ["1", "1", "1"]


@pytest.mark.parametrize(
    "objective, task",
    [
        ("tft_multiple_negatives_ranking", "stsb"),
        ("tft_cosine_embedding", "stsb"),
        ("tft_cosine_mse", "rte"),
        ("tft_multiple_negatives_ranking", "mnli"),
    ],
)
def test_cosine_objectives_reject_tasks_without_a_positive_class(objective, task):
    with pytest.raises(ConfigurationError):
        build(task, type=objective)
