from typing import Optional

import torch
from allennlp.modules.token_embedders import PretrainedTransformerEmbedder, TokenEmbedder

from tft_allennlp.modules.adapters.transformer_adapters import TransformerAdapters


@TokenEmbedder.register("tft_pretrained_transformer")
class TftPretrainedTransformerEmbedder(PretrainedTransformerEmbedder):
    """
    AllenNLP's `pretrained_transformer` embedder, for any checkpoint and for the empty padding
    batches of `tft_streaming`:

    - The model's pooler (BERT, RoBERTa, MPNet, ...) is removed unless `keep_pooler`: the
      plugin's models read the final hidden states, and an unused pooler would make DDP wait for
      gradients that never come. Models without a pooler (DistilBERT, ELECTRA, DeBERTa) load as
      they are, unlike with `transformer_kwargs: {add_pooling_layer: false}`, which they reject.
    - A batch with no examples skips AllenNLP's check of the segment ids (the maximum of an
      empty tensor is undefined) and yields an empty tensor of hidden states.
    - `adapters` (e.g. `tft_bottleneck`) are attached to the loaded model, which they freeze:
      parameter-efficient fine-tuning of any of the plugin's configs.

    Registered as a `TokenEmbedder` with name "tft_pretrained_transformer".

    # Parameters

    keep_pooler : `bool`, optional (default = `False`)
        Keep the checkpoint's pooler (unused by this embedder's output).
    adapters : `TransformerAdapters`, optional
        Attached to the transformer after loading; the transformer's own weights are then
        frozen (see `tft_allennlp.modules.adapters`).
    **kwargs
        As AllenNLP's `pretrained_transformer` embedder (`model_name`, `max_length`,
        `train_parameters`, `transformer_kwargs`, ...).
    """

    def __init__(
        self,
        model_name: str,
        *,
        keep_pooler: bool = False,
        adapters: Optional[TransformerAdapters] = None,
        **kwargs,
    ) -> None:
        super().__init__(model_name, **kwargs)
        if not keep_pooler and getattr(self.transformer_model, "pooler", None) is not None:
            self.transformer_model.pooler = None
        self.adapters = adapters
        if adapters is not None:
            adapters.attach(self.transformer_model)

    def forward(  # type: ignore
        self,
        token_ids: torch.LongTensor,
        mask: torch.BoolTensor,
        type_ids: Optional[torch.LongTensor] = None,
        segment_concat_mask: Optional[torch.BoolTensor] = None,
    ) -> torch.Tensor:
        if token_ids.size(0) == 0:
            type_ids = None
        return super().forward(token_ids, mask, type_ids, segment_concat_mask)
