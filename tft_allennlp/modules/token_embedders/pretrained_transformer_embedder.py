from typing import Optional

import torch
from allennlp.modules.token_embedders import PretrainedTransformerEmbedder, TokenEmbedder

from tft_allennlp.common.transformer_source import (
    archived_copy,
    archived_pooler,
    keep_dropped_pooler,
    transformer_source,
)
from tft_allennlp.modules.adapters.transformer_adapters import TransformerAdapters


@TokenEmbedder.register("tft_pretrained_transformer")
class TftPretrainedTransformerEmbedder(PretrainedTransformerEmbedder):
    """
    AllenNLP's `pretrained_transformer` embedder, for any checkpoint, for self-contained archives
    and for the empty padding batches of `tft_streaming`:

    - The model's pooler (BERT, RoBERTa, MPNet, ...) is removed unless `keep_pooler`: the
      plugin's models read the final hidden states, and an unused pooler would make DDP wait for
      gradients that never come. Models without a pooler (DistilBERT, ELECTRA, DeBERTa) load as
      they are, unlike with `transformer_kwargs: {add_pooling_layer: false}`, which they reject.
      The dropped pooler is kept aside (`dropped_pooler`, no parameter of the model) for
      `tft-export`, which writes it back.
    - `model_name` may be a model archive of the plugin (an injection's `model.tar.gz`), whose
      encoder is then exported on the fly, as `tft-export` writes it (see
      `tft_allennlp.common.transformer_source`).
    - In training, the checkpoint's config and tokenizer files (and the dropped pooler) are
      copied into the serialization directory, which the configs' `include_in_archive` puts
      into `model.tar.gz`; loaded from that archive, the transformer is built from the copy
      without reading any weights but the archive's: the archive needs nothing else.
    - A batch with no examples skips AllenNLP's check of the segment ids (the maximum of an
      empty tensor is undefined) and yields an empty tensor of hidden states.
    - `adapters` (e.g. `tft_bottleneck`) are attached to the loaded model, which they freeze:
      parameter-efficient fine-tuning of any of the plugin's configs.

    Registered as a `TokenEmbedder` with name "tft_pretrained_transformer".

    # Parameters

    model_name : `str`
        A hub name, a local Hugging Face checkpoint directory, or a model archive of the plugin.
    keep_pooler : `bool`, optional (default = `False`)
        Keep the checkpoint's pooler (unused by this embedder's output).
    adapters : `TransformerAdapters`, optional
        Attached to the transformer after loading; the transformer's own weights are then
        frozen (see `tft_allennlp.modules.adapters`).
    serialization_dir : `str`, optional
        Given by AllenNLP: the training run's directory, or the extracted archive being loaded.
    **kwargs
        As AllenNLP's `pretrained_transformer` embedder (`max_length`, `train_parameters`,
        `transformer_kwargs`, ...).
    """

    def __init__(
        self,
        model_name: str,
        *,
        keep_pooler: bool = False,
        adapters: Optional[TransformerAdapters] = None,
        serialization_dir: Optional[str] = None,
        **kwargs,
    ) -> None:
        source = transformer_source(model_name, serialization_dir)
        from_archive = source == archived_copy(model_name, serialization_dir)
        if from_archive:
            # Every weight is in the archive's weights.th, loaded after construction.
            kwargs["load_weights"] = False
        super().__init__(source, **kwargs)
        self.model_name = model_name
        self.source = source
        dropped = None
        pooler = getattr(self.transformer_model, "pooler", None)
        if not keep_pooler and pooler is not None:
            self.transformer_model.pooler = None
            if not from_archive:
                keep_dropped_pooler(model_name, serialization_dir, pooler)
                dropped = pooler
            else:
                # An archive made before the pooler was kept has none: then it stays unknown.
                state = archived_pooler(source)
                if state is not None:
                    pooler.load_state_dict(state)
                    dropped = pooler
        # Outside the module tree: no parameter (DDP, the optimizer and checkpoints never see
        # it), only what `tft-export` writes back.
        object.__setattr__(self, "dropped_pooler", dropped)
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
