import torch
from allennlp.modules.span_extractors.span_extractor import SpanExtractor
from allennlp.nn.util import masked_mean

from tft_allennlp.modules.span_extractors.pooling_span_extractor import PoolingSpanExtractor


@SpanExtractor.register("tft_mean_pooling")
class MeanPoolingSpanExtractor(PoolingSpanExtractor):
    """
    Represents a span by the mean of its token vectors, the pooling of the "simple" phrase
    features of Arase & Tsujii's follow-up (2021).

    Registered as a `SpanExtractor` with name "tft_mean_pooling". Parameters as
    `PoolingSpanExtractor`.
    """

    def _pool(self, span_vectors: torch.FloatTensor, mask: torch.BoolTensor) -> torch.FloatTensor:
        return masked_mean(span_vectors, mask, dim=-2)  # type: ignore[return-value]
