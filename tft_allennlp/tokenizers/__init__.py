from tft_allennlp.tokenizers.pretrained_transformer_tokenizer import (
    TftPretrainedTransformerTokenizer,
)
