from typing import Optional

import torch
from allennlp.data import Vocabulary

from tft_allennlp.modules.siamese_losses.cosine_loss import CosineLoss
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

    vocab : `Vocabulary`
        Holds the two labels in `label_namespace`.
    task : `str`
        `mrpc` or `qqp`.
    margin : `float`, optional (default = `0.5`)
        Negative pairs cost nothing once their cosine is at most `margin`.
    threshold : `float`, optional (default = `(1 + margin) / 2`)
        Cosine similarity from which a pair is predicted positive.
    label_namespace : `str`, optional (default = `"labels"`)
    """

    def __init__(
        self,
        vocab: Vocabulary,
        task: str,
        margin: float = 0.5,
        threshold: Optional[float] = None,
        label_namespace: str = "labels",
    ) -> None:
        threshold = (1.0 + margin) / 2.0 if threshold is None else threshold
        super().__init__(vocab, task, threshold, label_namespace)
        self._margin = margin

    def _losses(
        self,
        embedding1: torch.Tensor,
        embedding2: torch.Tensor,
        cosine: torch.Tensor,
        label: torch.Tensor,
    ) -> torch.Tensor:
        # Shape: (batch_size,)
        positive = self._target(label).bool()
        # Shape: (batch_size,)
        return torch.where(positive, 1.0 - cosine, (cosine - self._margin).clamp(min=0.0))
