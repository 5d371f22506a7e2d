import torch
from allennlp.modules.span_extractors.span_extractor import SpanExtractor
from allennlp.nn.util import masked_max

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

    def _pool(self, span_vectors: torch.FloatTensor, mask: torch.BoolTensor) -> torch.FloatTensor:
        return masked_max(span_vectors, mask, dim=-2)  # type: ignore[return-value]
