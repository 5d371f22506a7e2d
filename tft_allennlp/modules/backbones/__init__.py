from tft_allennlp.modules.backbones.pretrained_transformer_backbone import (
    TftPretrainedTransformerBackbone,
)
