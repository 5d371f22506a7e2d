from typing import Any

import torch

from tft_allennlp.modules.siamese_losses.cosine_loss import CosineLoss, ScoredPairs
from tft_allennlp.modules.siamese_losses.siamese_loss import SiameseLoss


@SiameseLoss.register("tft_multiple_negatives_ranking")
class MultipleNegativesRankingLoss(CosineLoss):
    """
    The multiple negatives ranking loss (Henderson et al., 2017; Sentence-BERT's
    `MultipleNegativesRankingLoss`): each positive pair `(a_i, b_i)` of the batch is a
    classification of `b_i` among the second sentences of the batch, with the scaled cosine
    similarities as logits:

        loss = -1/K sum_i [s * cos(a_i, b_i) - log sum_j exp(s * cos(a_i, b_j))]

    where `i` runs over the `K` positive pairs of the batch and `j` over all `batch_size` pairs.

    Only positive pairs are trained on: a negative pair is never an anchor (its first sentence
    is not used), but its second sentence stays among the candidates `b_j` of every positive
    anchor, as one more in-batch negative. A batch with no positive pair has a zero loss in
    training and none in evaluation. The in-batch negatives are assumed not to be paraphrases
    of the anchor: batches with repeated sentences (QQP's duplicate questions) give noisy
    negatives. Predictions and metrics come from `threshold` on the pair's cosine (see
    `CosineLoss`). For the paraphrase tasks with a positive class (MRPC, QQP).

    Registered as a `SiameseLoss` with name "tft_multiple_negatives_ranking".

    # Parameters

    `CosineLoss`'s (`vocab`, `task`: `mrpc` or `qqp`, `threshold`, `label_namespace`), and:

    scale : `float`, optional (default = `20.0`)
        `s`, the inverse temperature of the softmax over the cosines.
    """

    def __init__(self, scale: float = 20.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._scale = scale

    def _losses(self, pairs: ScoredPairs) -> torch.Tensor:
        # Shape: (batch_size, embedding_dim)
        anchors = torch.nn.functional.normalize(pairs.embedding1, dim=-1)
        candidates = torch.nn.functional.normalize(pairs.embedding2, dim=-1)
        # Shape: (batch_size, batch_size): cos(a_i, b_j), the pair's own at j = i.
        logits = self._scale * anchors @ candidates.t()
        # Shape: (batch_size,)
        positive = self._target(pairs.label).bool()
        own = torch.arange(len(pairs.label), device=logits.device)
        # Shape: (num_positive_pairs,)
        return torch.nn.functional.cross_entropy(logits[positive], own[positive], reduction="none")
