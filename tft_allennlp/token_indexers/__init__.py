from tft_allennlp.token_indexers.pretrained_transformer_indexer import (
    TftPretrainedTransformerIndexer,
)
