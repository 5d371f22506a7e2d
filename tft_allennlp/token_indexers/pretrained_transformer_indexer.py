from typing import Optional

from allennlp.data.token_indexers import PretrainedTransformerIndexer, TokenIndexer

from tft_allennlp.common.transformer_source import transformer_source


@TokenIndexer.register("tft_pretrained_transformer")
class TftPretrainedTransformerIndexer(PretrainedTransformerIndexer):
    """
    AllenNLP's `pretrained_transformer` indexer that reads its files from a model archive when it
    is loaded from one, and takes a model archive of the plugin as `model_name` (see
    `tft_allennlp.common.transformer_source`).

    Registered as a `TokenIndexer` with name "tft_pretrained_transformer".

    # Parameters

    model_name : `str`
        A hub name, a local Hugging Face checkpoint directory, or a model archive of the plugin.
    serialization_dir : `str`, optional
        Given by AllenNLP: the training run's directory, or the extracted archive being loaded.
    **kwargs
        As AllenNLP's `pretrained_transformer` indexer (`namespace`, `max_length`,
        `tokenizer_kwargs`).
    """

    def __init__(
        self, model_name: str, *, serialization_dir: Optional[str] = None, **kwargs
    ) -> None:
        super().__init__(transformer_source(model_name, serialization_dir), **kwargs)
