import contextlib
from typing import Any, Optional, cast

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.modules.token_embedders import PretrainedTransformerEmbedder, TokenEmbedder
from transformers.initialization import no_init_weights

from tft_allennlp.common.transformer_source import (
    archived_copy,
    keep_dropped_pooler,
    load_archived_pooler,
    transformer_source,
)
from tft_allennlp.modules.adapters.transformer_adapters import TransformerAdapters
from tft_allennlp.modules.packed_dropout import use_packed_dropout
from tft_allennlp.modules.token_embedders.eager_attention import layer_states
from tft_host_patches.host_state import forget_cached_transformer

ATTENTION = ("sdpa", "eager")


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
    - AllenNLP keeps each loaded checkpoint in a process-wide cache and gives the embedder a
      deep copy; the cached original, as large as the model, is dropped once the copy is made
      (a later load of the same checkpoint reads it again), so that training does not hold
      the weights twice.
    - A batch with no examples skips AllenNLP's check of the segment ids (the maximum of an
      empty tensor is undefined) and yields an empty tensor of hidden states.
    - `adapters` (e.g. `tft_bottleneck`) are attached to the loaded model, which they freeze:
      parameter-efficient fine-tuning of any of the plugin's configs.
    - `first_token_only`, a `forward` argument that a model passes when it reads nothing but the
      first wordpiece's final state (`[CLS]`, as the GLUE classifier does): the last layer then
      computes only that position (its keys and values still come from every wordpiece), and
      the output has one position. The other positions' last-layer outputs would be thrown
      away, and computing them is most of the last layer's work: about 14% of a 6-layer
      encoder's forward and backward pass, and of the activations it keeps for the backward
      pass. The first position's state is the same as in the full pass, up to floating-point
      rounding. BERT- and RoBERTa-type encoders take this path; any other model (or one with
      gradient checkpointing, `max_length` folding or `last_layer_only: false`) runs its full
      forward pass and the output is cut to the first position.

    Registered as a `TokenEmbedder` with name "tft_pretrained_transformer".

    # Parameters

    model_name : `str`
        A hub name, a local Hugging Face checkpoint directory, or a model archive of the plugin.
    keep_pooler : `bool`, optional (default = `False`)
        Keep the checkpoint's pooler (unused by this embedder's output).
    adapters : `TransformerAdapters`, optional
        Attached to the transformer after loading; the transformer's own weights are then
        frozen (see `tft_allennlp.modules.adapters`).
    attention : `str`, optional (default = `None`)
        The attention implementation, transformers' `attn_implementation`: `"sdpa"`, PyTorch's
        `scaled_dot_product_attention` (fused kernels on a GPU), or `"eager"`, the model's own
        matrix products; by default transformers' choice, `"sdpa"` where the model has it (of
        the encoders here, all but MPNet and DeBERTa-v2 in transformers 5) and `"eager"`
        elsewhere. Both compute the same function (MiniLM's states agree to 4e-6); on this
        project's CPU eager is the faster under bfloat16, and lets `packed_dropout` draw the
        attention weights' masks too where the first-token path runs the layer
        (`benchmarks/RESULTS.md`, "Compiled and fused steps").
    packed_dropout : `bool`, optional (default = `False`)
        Put `PackedDropout` in place of the transformer's dropout layers: on the CPU, masks from
        a quarter of the random numbers (the same rate to 2^-16; see
        `tft_allennlp.modules.packed_dropout`), elsewhere PyTorch's dropout. With `"sdpa"`
        attention the attention weights' dropout happens inside PyTorch's attention and stays
        PyTorch's; with `"eager"` it is packed too where the first-token path runs the layer
        (GLUE fine-tuning), but not where transformers 5 runs it (the whole sequence, as in
        injection), whose eager attention drops the weights with PyTorch's functional dropout.
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
        attention: Optional[str] = None,
        packed_dropout: bool = False,
        serialization_dir: Optional[str] = None,
        **kwargs,
    ) -> None:
        if attention is not None:
            if attention not in ATTENTION:
                raise ConfigurationError(
                    f"attention {attention!r}: not one of {list(ATTENTION)} (the attention "
                    "implementation: PyTorch's scaled-dot-product attention, or the model's own)"
                )
            kwargs["transformer_kwargs"] = {
                **(kwargs.get("transformer_kwargs") or {}),
                "attn_implementation": attention,
            }
        source = transformer_source(model_name, serialization_dir)
        from_archive = source == archived_copy(model_name, serialization_dir)
        if from_archive:
            # Every weight is in the archive's weights.th, loaded after construction.
            kwargs["load_weights"] = False
        # Nor are the weights initialised randomly first (a quarter of a second of MiniLM's
        # `allennlp predict`); AllenNLP refuses an archive whose weights.th misses one.
        with no_init_weights() if from_archive else contextlib.nullcontext():
            super().__init__(source, **kwargs)
        forget_cached_transformer(source)
        self.model_name = model_name
        self.source = source
        dropped = None
        pooler = getattr(self.transformer_model, "pooler", None)
        if not keep_pooler and pooler is not None:
            setattr(self.transformer_model, "pooler", None)
            if not from_archive:
                keep_dropped_pooler(model_name, serialization_dir, pooler)
                dropped = pooler
            else:
                # An archive made before the pooler was kept has none: then it stays unknown.
                if load_archived_pooler(source, pooler):
                    dropped = pooler
        # Outside the module tree: no parameter (DDP, the optimizer and checkpoints never see
        # it), only what `tft-export` writes back.
        object.__setattr__(self, "dropped_pooler", dropped)
        self.adapters = adapters
        if adapters is not None:
            adapters.attach(self.transformer_model)
        if packed_dropout:
            use_packed_dropout(self.transformer_model)

    def forward(  # type: ignore
        self,
        token_ids: torch.LongTensor,
        mask: torch.BoolTensor,
        type_ids: Optional[torch.LongTensor] = None,
        segment_concat_mask: Optional[torch.BoolTensor] = None,
        first_token_only: bool = False,
    ) -> torch.Tensor:
        """
        # Parameters

        token_ids, mask, type_ids, segment_concat_mask :
            As for AllenNLP's `pretrained_transformer` embedder.
        first_token_only : `bool`, optional (default = `False`)
            Return the final state of the first wordpiece only, shape
            `(batch_size, 1, embedding_dim)`, computing the last layer for that position alone
            where the model allows it.

        # Returns

        Shape `(batch_size, num_wordpieces, embedding_dim)`, or `(batch_size, 1, embedding_dim)`
        with `first_token_only`.
        """
        if token_ids.size(0) == 0:
            # transformers 5's attention cannot reshape an empty batch: one sequence of the
            # same length goes through instead, cut to none, so that every parameter still
            # takes part in the backward pass (with zero gradients), as distributed training's
            # empty padding batches need.
            one = token_ids.new_zeros((1, token_ids.size(1)))
            states = self.forward(
                cast(torch.LongTensor, one),
                cast(torch.BoolTensor, mask.new_ones((1, mask.size(1)))),
                first_token_only=first_token_only,
            )
            return states[:0]
        if torch.compiler.is_compiling() and self._max_length is None:
            type_ids = type_ids if self._number_of_token_type_embeddings() > 0 else None
            if first_token_only and self._first_token_path():
                return self._first_token_states(token_ids, mask, type_ids)
            states = self._states(token_ids, mask, type_ids)
            return states[:, :1] if first_token_only else states
        if not first_token_only:
            return super().forward(token_ids, mask, type_ids, segment_concat_mask)
        if not self._first_token_path():
            return super().forward(token_ids, mask, type_ids, segment_concat_mask)[:, :1]
        return self._first_token_states(token_ids, mask, type_ids)

    def _states(
        self,
        token_ids: torch.LongTensor,
        mask: torch.BoolTensor,
        type_ids: Optional[torch.LongTensor],
    ) -> torch.Tensor:
        """
        AllenNLP's forward pass (without folding long sequences) as `torch.compile` traces it:
        AllenNLP reads the largest type id back to check it, which would break the compiled
        graph in two; the transformer's embedding lookup refuses one too large all the same, and
        type ids of zeros give the same states as none.
        """
        parameters = {"input_ids": token_ids, "attention_mask": mask.float()}
        if type_ids is not None:
            parameters["token_type_ids"] = type_ids
        output = self.transformer_model(**parameters)
        if self._scalar_mix is not None:
            return self._scalar_mix(output.hidden_states[1:])
        return output.last_hidden_state

    def _first_token_path(self) -> bool:
        """Whether `_first_token_states` can compute this model: a BERT-type encoder, as is."""
        model = self.transformer_model
        config = model.config
        return (
            config.model_type in ("bert", "roberta")
            and not config.is_decoder
            and getattr(config, "position_embedding_type", "absolute") == "absolute"
            and self._max_length is None
            and self._scalar_mix is None
            and not model.is_activation_checkpointing
        )

    def _first_token_states(
        self,
        token_ids: torch.LongTensor,
        mask: torch.BoolTensor,
        type_ids: Optional[torch.LongTensor],
    ) -> torch.Tensor:
        """
        The encoder's forward pass with the last layer at the first position only: the same
        modules, called as the model calls them (so that hooks, such as adapters' and the SMART
        noise on the embeddings, apply), the last layer's attention taking its queries from the
        first position and its keys and values from all, as a cross-attention over the layer's
        own input. Eager attention runs with its scores from one matrix product
        (`eager_attention`).
        """
        compiling = torch.compiler.is_compiling()
        if type_ids is not None and not compiling:
            max_type_id = int(type_ids.max())
            if max_type_id == 0:
                type_ids = None
            elif max_type_id >= self._number_of_token_type_embeddings():
                raise ValueError("Found type ids too large for the chosen transformer model.")
        model: Any = self.transformer_model
        # Shape: (batch_size, num_wordpieces, embedding_dim)
        hidden = model.embeddings(input_ids=token_ids, token_type_ids=type_ids)
        # Shape: (batch_size, 1, 1, num_wordpieces): 0 where attended, the dtype's minimum at
        # padding (the transformer's own additive mask); none when nothing is padded. Under
        # autocast, in autocast's dtype, that of the attention scores it is added to: a float32
        # mask would turn the scores, the softmax, the dropout and their gradients to float32,
        # and each would be cast back for the next matrix product (8% of a bfloat16 MRPC step on
        # the CPU; on a GPU, autocast computes the softmax in float32 either way).
        dtype = hidden.dtype
        if torch.is_autocast_enabled(hidden.device.type):
            dtype = torch.get_autocast_dtype(hidden.device.type)
        additive = None
        if compiling or not bool(mask.all()):
            additive = (~mask)[:, None, None, :].to(dtype) * torch.finfo(dtype).min
        layers = model.encoder.layer
        for layer in layers[:-1]:
            hidden = layer_states(layer, hidden, hidden, additive)
        # Shape: (batch_size, 1, embedding_dim)
        return layer_states(layers[-1], hidden[:, :1], hidden, additive)
