from tft_allennlp.modules import (
    adapters,
    backbones,
    output_regularizers,
    phrase_pair_features,
    siamese_losses,
    span_extractors,
    token_embedders,
)
