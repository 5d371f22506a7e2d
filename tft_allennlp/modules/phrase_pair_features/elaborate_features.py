import torch

from tft_allennlp.modules.phrase_pair_features.phrase_pair_features import PhrasePairFeatures


@PhrasePairFeatures.register("tft_elaborate")
class ElaborateFeatures(PhrasePairFeatures):
    """
    `[hs; ht; hs * ht; |hs - ht|]`, four times the input size: the paper's phrase-pair features
    (Arase & Tsujii, 2019), used with max pooling.

    Registered as a `PhrasePairFeatures` with name "tft_elaborate".
    """

    def forward(self, source: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        # Shape: (batch_size, num_pairs, 4 * input_dim)
        return torch.cat([source, target, source * target, (source - target).abs()], dim=-1)

    def get_output_dim(self, input_dim: int) -> int:
        return 4 * input_dim
