import torch
from allennlp.modules.span_extractors.span_extractor import SpanExtractor

from tft_allennlp.modules.span_extractors.pooling_span_extractor import PoolingSpanExtractor


@SpanExtractor.register("tft_mean_pooling")
class MeanPoolingSpanExtractor(PoolingSpanExtractor):
    """
    Represents a span by the mean of its token vectors, the pooling of the "simple" phrase
    features of Arase & Tsujii's follow-up (2021).

    Registered as a `SpanExtractor` with name "tft_mean_pooling". Parameters as
    `PoolingSpanExtractor`.
    """

    def _pool(
        self, token_vectors: torch.Tensor, owners: torch.Tensor, num_spans: int
    ) -> torch.Tensor:
        # Shape: (num_spans, input_dim) and (num_spans, 1)
        sums = token_vectors.new_zeros(num_spans, token_vectors.size(-1)).index_add(
            0, owners, token_vectors
        )
        counts = torch.bincount(owners, minlength=num_spans).clamp(min=1).unsqueeze(-1)
        return sums / counts

    def _pool_ranges(
        self,
        sequence_tensor: torch.Tensor,
        token_mask: torch.Tensor,
        starts: torch.Tensor,
        ends: torch.Tensor,
        counts: torch.Tensor,
    ) -> torch.Tensor:
        # Shape: (batch_size, num_tokens + 1, input_dim): sums of the unmasked tokens before
        # each position.
        values = sequence_tensor * token_mask.unsqueeze(-1).to(sequence_tensor.dtype)
        before = torch.nn.functional.pad(values.cumsum(1), (0, 0, 1, 0))
        rows = torch.arange(starts.size(0), device=starts.device).unsqueeze(-1)
        # Shape: (batch_size, num_spans, input_dim)
        sums = before[rows, ends + 1] - before[rows, starts]
        return sums / counts.clamp(min=1).unsqueeze(-1).to(sums.dtype)
