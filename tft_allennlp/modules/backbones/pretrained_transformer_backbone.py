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
    embedder inside: the checkpoint's unused pooler dropped unless `keep_pooler`, optional
    `adapters` attached to the transformer, which they freeze, a model archive accepted as
    `model_name`, and self-contained archives (see `TftPretrainedTransformerEmbedder`).

    Registered as a `Backbone` with name "tft_pretrained_transformer".

    # Parameters

    vocab : `Vocabulary`
    model_name : `str`
    keep_pooler : `bool`, optional (default = `False`)
    adapters : `TransformerAdapters`, optional
    attention : `str`, optional (default = `None`)
        The attention implementation (see `TftPretrainedTransformerEmbedder`).
    packed_dropout : `bool`, optional (default = `False`)
        Dropout masks from packed random words on the CPU (see `TftPretrainedTransformerEmbedder`).
    serialization_dir : `str`, optional
        Given by AllenNLP: the training run's directory, or the extracted archive being loaded.
    output_token_strings : `bool`, optional (default = `True`)
    vocab_namespace : `str`, optional (default = `"tags"`)
    **kwargs
        As the `tft_pretrained_transformer` embedder (`max_length`, `train_parameters`, ...).
    """

    def __init__(
        self,
        vocab: Vocabulary,
        model_name: str,
        *,
        keep_pooler: bool = False,
        adapters: Optional[TransformerAdapters] = None,
        attention: Optional[str] = None,
        packed_dropout: bool = False,
        serialization_dir: Optional[str] = None,
        output_token_strings: bool = True,
        vocab_namespace: str = "tags",
        **kwargs,
    ) -> None:
        # AllenNLP's constructor would load the checkpoint into an embedder of its own; this sets
        # the same attributes around the plugin's embedder instead.
        Backbone.__init__(self)
        self._vocab = vocab
        self._namespace = vocab_namespace
        self._output_token_strings = output_token_strings
        self._embedder = TftPretrainedTransformerEmbedder(
            model_name,
            keep_pooler=keep_pooler,
            adapters=adapters,
            attention=attention,
            packed_dropout=packed_dropout,
            serialization_dir=serialization_dir,
            **kwargs,
        )
