from typing import Any, Optional

import torch

from tft_allennlp.modules.siamese_losses.cosine_loss import CosineLoss, ScoredPairs
from tft_allennlp.modules.siamese_losses.siamese_loss import SiameseLoss


@SiameseLoss.register("tft_cosine_embedding")
class CosineEmbeddingLoss(CosineLoss):
    """
    The cosine embedding (contrastive) loss, as `torch.nn.CosineEmbeddingLoss`: `1 - cos(u, v)`
    for a positive pair and `max(0, cos(u, v) - margin)` for a negative one, averaged over the
    pairs. Positive pairs are pulled to cosine 1 and negative ones pushed under `margin`; a pair
    is predicted positive when its cosine is at least `threshold`, by default halfway between
    the two, `(1 + margin) / 2`. For the paraphrase tasks with a positive class (MRPC, QQP).

    Registered as a `SiameseLoss` with name "tft_cosine_embedding".

    # Parameters

    `CosineLoss`'s (`vocab`, `task`: `mrpc` or `qqp`, `label_namespace`), and:

    margin : `float`, optional (default = `0.5`)
        Negative pairs cost nothing once their cosine is at most `margin`.
    threshold : `float`, optional (default = `(1 + margin) / 2`)
        Cosine similarity from which a pair is predicted positive.
    """

    def __init__(
        self, margin: float = 0.5, threshold: Optional[float] = None, **kwargs: Any
    ) -> None:
        threshold = (1.0 + margin) / 2.0 if threshold is None else threshold
        super().__init__(threshold=threshold, **kwargs)
        self._margin = margin

    def _losses(self, pairs: ScoredPairs) -> torch.Tensor:
        # Shape: (batch_size,)
        positive = self._target(pairs.label).bool()
        cosine = pairs.cosine
        # Shape: (batch_size,)
        return torch.where(positive, 1.0 - cosine, (cosine - self._margin).clamp(min=0.0))
