from typing import Optional

from allennlp.data import Vocabulary
from allennlp.modules.backbones import Backbone, PretrainedTransformerBackbone

from tft_allennlp.modules.adapters.transformer_adapters import TransformerAdapters
from tft_allennlp.modules.token_embedders.pretrained_transformer_embedder import (
    TftPretrainedTransformerEmbedder,
)


@Backbone.register("tft_pretrained_transformer")
class TftPretrainedTransformerBackbone(PretrainedTransformerBackbone):
    """
    AllenNLP's `pretrained_transformer` backbone (for `MultiTaskModel`) with the plugin's
    embedder inside: the checkpoint's unused pooler dropped unless `keep_pooler`, and optional
    `adapters` attached to the transformer, which they freeze.

    Registered as a `Backbone` with name "tft_pretrained_transformer".

    # Parameters

    vocab : `Vocabulary`
    model_name : `str`
    keep_pooler : `bool`, optional (default = `False`)
    adapters : `TransformerAdapters`, optional
    **kwargs
        As AllenNLP's `pretrained_transformer` backbone (`max_length`, `train_parameters`,
        `output_token_strings`, ...).
    """

    def __init__(
        self,
        vocab: Vocabulary,
        model_name: str,
        *,
        keep_pooler: bool = False,
        adapters: Optional[TransformerAdapters] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, model_name, **kwargs)
        # AllenNLP builds its own embedder from the same arguments; replace it with the
        # plugin's (AllenNLP caches the checkpoint, so it is read once).
        for backbone_only in ("output_token_strings", "vocab_namespace"):
            kwargs.pop(backbone_only, None)
        self._embedder = TftPretrainedTransformerEmbedder(
            model_name, keep_pooler=keep_pooler, adapters=adapters, **kwargs
        )
