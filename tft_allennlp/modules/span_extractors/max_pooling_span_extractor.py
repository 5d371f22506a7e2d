import torch
from allennlp.modules.span_extractors.span_extractor import SpanExtractor

from tft_allennlp.modules.span_extractors.pooling_span_extractor import PoolingSpanExtractor


@SpanExtractor.register("tft_max_pooling")
class MaxPoolingSpanExtractor(PoolingSpanExtractor):
    """
    Represents a span by the dimension-wise maximum of its token vectors, the pooling of the
    paper's "elaborate" phrase features. Unlike AllenNLP 2.10.1's `max_pooling`, it accepts the
    `-1` padding of empty span lists (see `PoolingSpanExtractor`).

    Registered as a `SpanExtractor` with name "tft_max_pooling". Parameters as
    `PoolingSpanExtractor`.
    """

    def _pool(
        self, token_vectors: torch.Tensor, owners: torch.Tensor, num_spans: int
    ) -> torch.Tensor:
        # Shape: (num_spans, input_dim). Tied maxima share the gradient (`torch.max` over a
        # padded dimension gives it to one of them).
        return token_vectors.new_zeros(num_spans, token_vectors.size(-1)).scatter_reduce(
            0,
            owners.unsqueeze(-1).expand_as(token_vectors),
            token_vectors,
            "amax",
            include_self=False,
        )

    def _pool_whole(self, sequence_tensor: torch.Tensor, inside: torch.Tensor) -> torch.Tensor:
        # Shape: (batch_size, num_spans, input_dim); tied maxima share the gradient, as above.
        lowest = torch.finfo(sequence_tensor.dtype).min
        pooled = torch.where(inside.unsqueeze(-1), sequence_tensor.unsqueeze(1), lowest).amax(2)
        return torch.where(inside.any(-1, keepdim=True), pooled, 0.0)
