import torch
from allennlp.common import Registrable


class PhrasePairFeatures(torch.nn.Module, Registrable):
    """
    Combines the pooled vectors of a source phrase and a target phrase into the feature vector
    that the phrasal classifier sees. Register a subclass to try another combination:

        @PhrasePairFeatures.register("my_features")
        class MyFeatures(PhrasePairFeatures):
            def forward(self, source, target): ...
            def get_output_dim(self, input_dim): ...
    """

    def forward(self, source: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """
        # Parameters

        source : `torch.Tensor`
            Shape `(batch_size, num_pairs, input_dim)`.
        target : `torch.Tensor`
            Same shape as `source`.

        # Returns

        A tensor of shape `(batch_size, num_pairs, self.get_output_dim(input_dim))`.
        """
        raise NotImplementedError

    def get_output_dim(self, input_dim: int) -> int:
        raise NotImplementedError
