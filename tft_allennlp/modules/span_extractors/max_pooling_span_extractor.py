import torch
from allennlp.modules.span_extractors.span_extractor import SpanExtractor

from tft_allennlp.modules.span_extractors.pooling_span_extractor import PoolingSpanExtractor

# Levels of the traced path's table of window maxima: spans of up to 2**10 - 1 wordpieces.
MAX_SPAN_LEVELS = 10


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

    def _pool_ranges(
        self,
        sequence_tensor: torch.Tensor,
        token_mask: torch.Tensor,
        starts: torch.Tensor,
        ends: torch.Tensor,
        counts: torch.Tensor,
    ) -> torch.Tensor:
        # A table of maxima over windows of 1, 2, 4, ... tokens: a span's maximum is that of the
        # two (overlapping) windows of the largest power of two that fits in it. Shape of each
        # level: (batch_size, num_tokens, input_dim), windows running past the end at lowest.
        lowest = torch.finfo(sequence_tensor.dtype).min
        level = torch.where(token_mask.unsqueeze(-1), sequence_tensor, lowest)
        levels = [level]
        for width in (2**power for power in range(MAX_SPAN_LEVELS - 1)):
            shifted = torch.nn.functional.pad(level[:, width:], (0, 0, 0, width), value=lowest)
            level = torch.maximum(level, shifted[:, : level.size(1)])
            levels.append(level)
        # Shape: (levels, batch_size, num_tokens, input_dim)
        table = torch.stack(levels)
        # Shape: (batch_size, num_spans): the window size's power, floor(log2(width)).
        power = (
            torch.log2((ends - starts + 1).float()).floor().long().clamp(max=MAX_SPAN_LEVELS - 1)
        )
        rows = torch.arange(starts.size(0), device=starts.device).unsqueeze(-1)
        # Shape: (batch_size, num_spans, input_dim) each
        first = table[power, rows, starts]
        last = table[power, rows, ends - (2**power) + 1]
        return torch.maximum(first, last)
