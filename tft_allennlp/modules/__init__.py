from tft_allennlp.modules import phrase_pair_features, span_extractors, token_embedders
