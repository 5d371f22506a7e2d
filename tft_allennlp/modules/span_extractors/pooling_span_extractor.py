from typing import Optional

import torch
from allennlp.modules.span_extractors.span_extractor_with_span_width_embedding import (
    SpanExtractorWithSpanWidthEmbedding,
)


class PoolingSpanExtractor(SpanExtractorWithSpanWidthEmbedding):
    """
    Base of the span extractors that pool the token vectors inside each span; subclasses only
    implement `_pool`.

    The tokens of all spans are pooled packed, one row per token inside a span, not padded to
    the longest span of the batch as AllenNLP's extractors do (`batched_span_select`): phrases
    are mostly a few wordpieces long, but one long phrase in a batch made about 96% of that
    padded tensor padding in the multi-source injection, and padding cost up to 3 GB of its
    worst step (`benchmarks/RESULTS.md`, "Injection memory").

    Padded spans, `(-1, -1)` in AllenNLP's `ListField[SpanField]` padding and masked out by
    `span_indices_mask`, come out as zeros; only unmasked spans are checked for range.
    (AllenNLP 2.10.1's `MaxPoolingSpanExtractor` validates the padding too and raises an
    `IndexError`, allennlp#5707.) Tokens that `sequence_mask` masks are left out of their span;
    a span with no token left comes out as zeros.

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
        # Shape: (batch_size, num_spans)
        kept = (
            span_indices.new_ones(span_indices.shape[:2], dtype=torch.bool)
            if span_indices_mask is None
            else span_indices_mask.bool()
        )
        if torch.compiler.is_compiling():
            whole = self._embed_spans_whole(sequence_tensor, span_indices, sequence_mask, kept)
            return whole  # type: ignore[return-value]
        # Shape: (num_kept,) each: the batch row and span slot of every unmasked span.
        rows, slots = kept.nonzero(as_tuple=True)
        starts, ends = span_indices[rows, slots, 0], span_indices[rows, slots, 1]
        if (starts < 0).any() or (ends >= sequence_tensor.size(1)).any() or (starts > ends).any():
            raise IndexError(
                f"Unmasked span out of range for a sequence of length {sequence_tensor.size(1)} "
                "(or start > end)."
            )
        widths = ends - starts + 1
        # Shape: (num_tokens,) each: the kept span a token belongs to, and its position.
        owners = torch.repeat_interleave(torch.arange(rows.numel(), device=rows.device), widths)
        firsts = torch.cumsum(widths, 0) - widths
        positions = (
            starts[owners] + torch.arange(owners.numel(), device=rows.device) - firsts[owners]
        )
        if sequence_mask is not None:
            inside = sequence_mask[rows[owners], positions].bool()
            owners, positions = owners[inside], positions[inside]
        # Shape: (num_tokens, input_dim)
        token_vectors = sequence_tensor[rows[owners], positions]
        # Shape: (batch_size, num_spans, input_dim); connected to the sequence even if no span is
        # kept, so that DDP sees a gradient for every parameter behind it.
        pooled = sequence_tensor.new_zeros(*span_indices.shape[:2], self._input_dim) + (
            sequence_tensor.sum() * 0.0
        )
        pooled[rows, slots] = self._pool(token_vectors, owners, rows.numel())
        return pooled  # type: ignore[return-value]

    def _embed_spans_whole(
        self,
        sequence_tensor: torch.Tensor,
        span_indices: torch.Tensor,
        sequence_mask: Optional[torch.Tensor],
        kept: torch.Tensor,
    ) -> torch.Tensor:
        """
        The same pooling as `torch.compile` traces it, in shapes that do not depend on the
        spans' values (the packed path's `nonzero` and `repeat_interleave` would break the graph
        at every call): each span as its first and last position, pooled by `_pool_ranges` from
        tables over the sequence. Spans are not checked for range here (that needs their values
        back in Python); padding spans come out as zeros.
        """
        batch_size, length = sequence_tensor.shape[:2]
        # Shape: (batch_size, num_spans) each, inside the sequence (padding spans too).
        starts = span_indices[:, :, 0].clamp(0, length - 1)
        ends = torch.maximum(span_indices[:, :, 1].clamp(0, length - 1), starts)
        # Shape: (batch_size, num_tokens)
        token_mask = (
            sequence_mask.bool()
            if sequence_mask is not None
            else torch.ones(batch_size, length, dtype=torch.bool, device=sequence_tensor.device)
        )
        # Shape: (batch_size, num_tokens + 1): unmasked tokens before each position.
        before = torch.nn.functional.pad(token_mask.long().cumsum(1), (1, 0))
        # Shape: (batch_size, num_spans)
        counts = before.gather(1, ends + 1) - before.gather(1, starts)
        pooled = self._pool_ranges(sequence_tensor, token_mask, starts, ends, counts)
        present = (kept & (counts > 0)).unsqueeze(-1)
        return torch.where(present, pooled, 0.0)

    def _pool_ranges(
        self,
        sequence_tensor: torch.Tensor,
        token_mask: torch.Tensor,
        starts: torch.Tensor,
        ends: torch.Tensor,
        counts: torch.Tensor,
    ) -> torch.Tensor:
        """
        `_pool` of the unmasked tokens (`token_mask` `(batch_size, num_tokens)`) from `starts`
        to `ends` (inclusive, `(batch_size, num_spans)`; `counts` of them) of `sequence_tensor`
        `(batch_size, num_tokens, input_dim)`; returns `(batch_size, num_spans, input_dim)`,
        anything for a span of no token (zeroed after).
        """
        raise NotImplementedError

    def _pool(
        self, token_vectors: torch.Tensor, owners: torch.Tensor, num_spans: int
    ) -> torch.Tensor:
        """
        Pools `token_vectors` of shape `(num_tokens, input_dim)`, the tokens of `num_spans` spans
        packed, where `owners` of shape `(num_tokens,)` gives each token's span; returns
        `(num_spans, input_dim)`, zeros for a span without tokens.
        """
        raise NotImplementedError
