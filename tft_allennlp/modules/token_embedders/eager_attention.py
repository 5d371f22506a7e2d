"""
A BERT-type layer as the first-token path runs it: transformers' eager self-attention with its
scaling and padding mask inside the scores' batched matrix product.

transformers' eager attention computes the scores `query @ key^T`, divides them by the square
root of the head size and adds the padding mask: two more passes over the largest tensors of
the layer, `(batch_size, heads, queries, keys)`, forward, and one more backward, each rounded
to bfloat16 under autocast. `torch.baddbmm(mask, query, key^T, alpha=head_size ** -0.5)` scales
and adds inside the matrix product, rounding once (MiniLM's self-attention forward and backward
at 32 x 70 under bfloat16 autocast on the CPU: 1.05-1.07x; a whole training step about 1.02x).
The softmax, the attention weights' dropout layer and the modules around the attention are the
layer's own, called as transformers calls them, so that their hooks (adapters' among them)
apply. A layer whose self-attention is another implementation (SDPA), or has hooks of its own,
runs through transformers' modules unchanged.
"""

from typing import Any, Optional

import torch
from transformers.models.bert.modeling_bert import BertSelfAttention
from transformers.models.roberta.modeling_roberta import RobertaSelfAttention

# transformers' eager self-attention classes of the architectures the first-token path runs (the
# SDPA ones are their subclasses, and stay as they are).
_EAGER = (BertSelfAttention, RobertaSelfAttention)


def layer_states(
    layer: Any,
    queries: torch.Tensor,
    keys: torch.Tensor,
    additive_mask: Optional[torch.Tensor],
) -> torch.Tensor:
    """
    The output states of a BERT-type `layer` at the positions of `queries`, attending to the
    positions of `keys`: the layer's own input (`queries is keys`), or, for the last layer of
    the first-token path, the first position of it attending to all.

    # Parameters

    layer : `torch.nn.Module`
        A transformers `BertLayer` or `RobertaLayer`.
    queries : `torch.Tensor`
        Shape `(batch_size, num_queries, embedding_dim)`.
    keys : `torch.Tensor`
        Shape `(batch_size, num_keys, embedding_dim)`.
    additive_mask : `torch.Tensor`, optional
        Shape `(batch_size, 1, 1, num_keys)`: 0 where attended, the dtype's minimum at padding;
        none when nothing is padded.

    # Returns

    Shape `(batch_size, num_queries, embedding_dim)`.
    """
    attention = layer.attention
    if _fusable(layer):
        context = _attention_context(attention.self, queries, keys, additive_mask)
        attended = attention.output(context, queries)
    elif queries is keys:
        return layer(queries, attention_mask=additive_mask)[0]
    else:
        attended = attention(
            queries, encoder_hidden_states=keys, encoder_attention_mask=additive_mask
        )[0]
    return layer.feed_forward_chunk(attended)


def _fusable(layer: Any) -> bool:
    """Whether `layer`'s self-attention is transformers' eager one, with no hooks on the way."""
    attention = layer.attention
    modules = (layer, attention, attention.self)
    return type(attention.self) in _EAGER and not any(
        module._forward_hooks
        or module._forward_pre_hooks
        or module._backward_hooks
        or module._backward_pre_hooks
        for module in modules
    )


def _attention_context(
    attention: Any,
    queries: torch.Tensor,
    keys: torch.Tensor,
    additive_mask: Optional[torch.Tensor],
) -> torch.Tensor:
    """
    What transformers' eager `attention` returns as its context, shape
    `(batch_size, num_queries, embedding_dim)`, with the scores from one `baddbmm`.
    """
    batch_size, num_queries, _ = queries.shape
    num_keys = keys.size(1)
    heads = attention.num_attention_heads
    head_size = attention.attention_head_size

    def split(states: torch.Tensor, length: int) -> torch.Tensor:
        # Shape: (batch_size * heads, length, head_size)
        return (
            states.view(batch_size, length, heads, head_size)
            .transpose(1, 2)
            .reshape(batch_size * heads, length, head_size)
        )

    query = split(attention.query(queries), num_queries)
    key = split(attention.key(keys), num_keys)
    value = split(attention.value(keys), num_keys)
    if additive_mask is None:
        # Ignored with beta 0: the scaled product alone.
        base, beta = query.new_zeros(()).expand(batch_size * heads, num_queries, num_keys), 0.0
    else:
        # Shape: (batch_size * heads, 1, num_keys), broadcast over the queries.
        base = additive_mask.expand(batch_size, heads, 1, num_keys).reshape(
            batch_size * heads, 1, num_keys
        )
        beta = 1.0
    # Shape: (batch_size * heads, num_queries, num_keys)
    scores = torch.baddbmm(base, query, key.transpose(1, 2), beta=beta, alpha=head_size**-0.5)
    weights = attention.dropout(torch.softmax(scores, dim=-1))
    # Shape: (batch_size * heads, num_queries, head_size)
    context = torch.bmm(weights, value)
    return (
        context.view(batch_size, heads, num_queries, head_size)
        .transpose(1, 2)
        .reshape(batch_size, num_queries, heads * head_size)
    )
