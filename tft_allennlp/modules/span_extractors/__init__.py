from tft_allennlp.modules.span_extractors.max_pooling_span_extractor import MaxPoolingSpanExtractor
from tft_allennlp.modules.span_extractors.mean_pooling_span_extractor import (
    MeanPoolingSpanExtractor,
)
