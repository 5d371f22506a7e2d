import torch

from tft_allennlp.modules.siamese_losses.cosine_loss import CosineLoss, ScoredPairs
from tft_allennlp.modules.siamese_losses.siamese_loss import SiameseLoss


@SiameseLoss.register("tft_cosine_mse")
class CosineMseLoss(CosineLoss):
    """
    Sentence-BERT's regression objective (Reimers & Gurevych, 2019): the cosine similarity of
    the two embeddings regressed on the gold score scaled to [0, 1] with mean squared error.
    STS-B's scores are divided by 5, and `score = 5 * cosine` is predicted; for MRPC and QQP the
    target is 1 for the positive class and 0 for the other, and a pair is predicted positive
    from `threshold` on (see `CosineLoss`).

    Registered as a `SiameseLoss` with name "tft_cosine_mse".

    # Parameters

    `CosineLoss`'s (`vocab`, `task`: `stsb`, `mrpc` or `qqp`, `threshold`, `label_namespace`).
    """

    supports_regression = True

    def _losses(self, pairs: ScoredPairs) -> torch.Tensor:
        # Shape: (batch_size,)
        return (pairs.cosine - self._target(pairs.label)) ** 2
