import torch

from tft_allennlp.modules.phrase_pair_features.phrase_pair_features import PhrasePairFeatures


@PhrasePairFeatures.register("tft_concat")
class ConcatFeatures(PhrasePairFeatures):
    """
    `[hs; ht]`, twice the input size: the "simple" features of Arase & Tsujii's follow-up
    (2021), used with mean pooling, which worked better than the elaborate ones (the injection
    variant `tft_simple` is this with `tft_mean_pooling`).

    Registered as a `PhrasePairFeatures` with name "tft_concat".
    """

    def forward(self, source: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        # Shape: (batch_size, num_pairs, 2 * input_dim)
        return torch.cat([source, target], dim=-1)

    def get_output_dim(self, input_dim: int) -> int:
        return 2 * input_dim
