from tft_allennlp.dataset_readers.negative_samplers.negative_sampler import NegativeSampler
from tft_allennlp.dataset_readers.negative_samplers.paper_negative_sampler import (
    PaperNegativeSampler,
)
