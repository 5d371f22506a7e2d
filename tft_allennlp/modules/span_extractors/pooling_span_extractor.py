from typing import Optional

import torch
from allennlp.modules.span_extractors.span_extractor_with_span_width_embedding import (
    SpanExtractorWithSpanWidthEmbedding,
)
from allennlp.nn import util


class PoolingSpanExtractor(SpanExtractorWithSpanWidthEmbedding):
    """
    Base of the span extractors that pool the token vectors inside each span; subclasses only
    implement `_pool`.

    Padded spans, `(-1, -1)` in AllenNLP's `ListField[SpanField]` padding and masked out by
    `span_indices_mask`, are pointed at token 0 before indexing and come out as zeros;
    only unmasked spans are checked for range. (AllenNLP 2.10.1's `MaxPoolingSpanExtractor`
    validates the padding too and raises an `IndexError`, allennlp#5707.)

    # Parameters

    input_dim : `int`
        The last dimension of the sequence tensor; also the output dimension unless span width
        embeddings are added.
    num_width_embeddings : `int`, optional (default = `None`)
    span_width_embedding_dim : `int`, optional (default = `None`)
    bucket_widths : `bool`, optional (default = `False`)
        Optional span width embeddings, as in AllenNLP's extractors.
    """

    def __init__(
        self,
        input_dim: int,
        num_width_embeddings: Optional[int] = None,
        span_width_embedding_dim: Optional[int] = None,
        bucket_widths: bool = False,
    ) -> None:
        super().__init__(
            input_dim=input_dim,
            num_width_embeddings=num_width_embeddings,
            span_width_embedding_dim=span_width_embedding_dim,
            bucket_widths=bucket_widths,
        )

    def get_output_dim(self) -> int:
        if self._span_width_embedding is not None:
            return self._input_dim + self._span_width_embedding.get_output_dim()
        return self._input_dim

    def _embed_spans(
        self,
        sequence_tensor: torch.FloatTensor,
        span_indices: torch.LongTensor,
        sequence_mask: Optional[torch.BoolTensor] = None,
        span_indices_mask: Optional[torch.BoolTensor] = None,
    ) -> torch.FloatTensor:
        if sequence_tensor.size(-1) != self._input_dim:
            raise ValueError(
                f"Expected sequence vectors of size {self._input_dim}, "
                f"got {sequence_tensor.size(-1)}."
            )
        if span_indices.numel() == 0:
            # No spans at all (an empty padding batch): zeros, still connected to the sequence
            # so that DDP sees a gradient for every parameter behind it.
            # Shape: (batch_size, num_spans, input_dim)
            return sequence_tensor.new_zeros(*span_indices.shape[:2], self._input_dim) + (  # type: ignore[return-value]
                sequence_tensor.sum() * 0.0
            )
        if span_indices_mask is not None:
            # Shape: (batch_size, num_spans, 2); padded spans become (0, 0).
            span_indices = span_indices * span_indices_mask.unsqueeze(-1).long()  # type: ignore[assignment]
        starts, ends = span_indices[..., 0], span_indices[..., 1]
        if (starts < 0).any() or (ends >= sequence_tensor.size(1)).any() or (starts > ends).any():
            raise IndexError(
                f"Unmasked span out of range for a sequence of length {sequence_tensor.size(1)} "
                "(or start > end)."
            )
        # Shape: (batch_size, num_spans, max_span_width, input_dim) and
        #        (batch_size, num_spans, max_span_width)
        span_vectors, span_mask = util.batched_span_select(sequence_tensor, span_indices)
        if sequence_mask is not None:
            # Shape: (batch_size, num_spans, max_span_width)
            token_mask = util.batched_span_select(sequence_mask.unsqueeze(-1), span_indices)[0]
            span_mask = span_mask & token_mask.squeeze(-1).bool()
        # Shape: (batch_size, num_spans, input_dim)
        return self._pool(span_vectors, span_mask.unsqueeze(-1))

    def _pool(self, span_vectors: torch.FloatTensor, mask: torch.BoolTensor) -> torch.FloatTensor:
        """
        Pools `span_vectors` of shape `(batch_size, num_spans, max_span_width, input_dim)` over
        the span width, where `mask` of shape `(batch_size, num_spans, max_span_width, 1)` is
        true; returns `(batch_size, num_spans, input_dim)`.
        """
        raise NotImplementedError
