import torch

from tft_allennlp.modules.siamese_losses.cosine_loss import CosineLoss
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

    vocab : `Vocabulary`
        Holds the two labels in `label_namespace` (unused for regression).
    task : `str`
        `stsb`, `mrpc` or `qqp`.
    threshold : `float`, optional (default = `0.5`)
        Cosine similarity from which a pair is predicted positive (classification only).
    label_namespace : `str`, optional (default = `"labels"`)
    """

    supports_regression = True

    def _losses(
        self,
        embedding1: torch.Tensor,
        embedding2: torch.Tensor,
        cosine: torch.Tensor,
        label: torch.Tensor,
    ) -> torch.Tensor:
        # Shape: (batch_size,)
        return (cosine - self._target(label)) ** 2
