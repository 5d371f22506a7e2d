import torch

from tft_allennlp.modules.phrase_pair_features.phrase_pair_features import PhrasePairFeatures


@PhrasePairFeatures.register("tft_concat_difference")
class ConcatDifferenceFeatures(PhrasePairFeatures):
    """
    `[u; v; |u - v|]`, three times the input size: Sentence-BERT's features for its softmax
    objective (Reimers & Gurevych, 2019), which found them better than adding `u * v`. The
    default features of the Siamese model's `tft_softmax` objective.

    Registered as a `PhrasePairFeatures` with name "tft_concat_difference".
    """

    def forward(self, source: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        # Shape: (..., 3 * input_dim)
        return torch.cat([source, target, (source - target).abs()], dim=-1)

    def get_output_dim(self, input_dim: int) -> int:
        return 3 * input_dim
