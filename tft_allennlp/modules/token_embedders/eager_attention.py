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
apply. A layer whose self-attention is another implementation (SDPA), adds relative position
scores or has hooks of its own runs through transformers' modules unchanged.

The last layer of the first-token path has one query against every position's key and value.
There the keys and values are never projected: each head's query goes into the states' space
through the key weights, and the weighted sum of the states comes out through the value weights
(`_folded_context`): MiniLM's last layer at 32 x 65 under bfloat16 autocast, forward and
backward, 23 -> 13 ms. Key and value projections that are not plain linear layers, or have hooks
(an adapter's), are projected as usual.
"""

from typing import Any, Optional, Tuple

import torch


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
        if queries is not keys and _foldable(attention.self):
            context = _folded_context(attention.self, queries, keys, additive_mask)
        else:
            context = _attention_context(attention.self, queries, keys, additive_mask)
        attended = attention.output(context, queries)
    elif queries is keys or _hooked((layer, attention, attention.self)):
        # The layer as the model calls it, its hooks included; the first positions cut after.
        return layer(keys, attention_mask=additive_mask)[:, : queries.size(1)]
    else:
        context = _interface_context(attention.self, queries, keys, additive_mask)
        attended = attention.output(context, queries)
    return layer.feed_forward_chunk(attended)


def _fusable(layer: Any) -> bool:
    """Whether `layer`'s self-attention is transformers' eager one, with no hooks on the way."""
    attention = layer.attention
    modules = (layer, attention, attention.self)
    return (
        isinstance(attention.self, _self_attention_classes())
        and attention.self.config._attn_implementation == "eager"
        and not _hooked(modules)
    )


# Filled at the first layer run (`_self_attention_classes`).
_SELF_ATTENTION: Tuple[Any, ...] = ()


def _self_attention_classes() -> Tuple[Any, ...]:
    """
    transformers' self-attention classes of the architectures the first-token path runs; each
    calls the attention function its config names (`_attn_implementation`): "eager" is fused
    here. Imported at the first layer run, not with the plugin: transformers 5's model code
    takes seconds to import, which a command that loads no model should not wait for. (A plain
    global, not `functools.lru_cache`, which torch's compiler would trace through with a warning.)
    """
    global _SELF_ATTENTION
    if not _SELF_ATTENTION:
        from transformers.models.bert.modeling_bert import BertSelfAttention
        from transformers.models.roberta.modeling_roberta import RobertaSelfAttention

        _SELF_ATTENTION = (BertSelfAttention, RobertaSelfAttention)
    return _SELF_ATTENTION


def _interface_context(
    attention: Any,
    queries: torch.Tensor,
    keys: torch.Tensor,
    additive_mask: Optional[torch.Tensor],
) -> torch.Tensor:
    """
    The context of `attention` (any implementation its config names, SDPA's among them) for the
    `queries` against the `keys`, shape `(batch_size, num_queries, embedding_dim)`: the
    projections and the attention function as transformers' self-attention calls them, with the
    queries from fewer positions than the keys and values.
    """
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
    from transformers.models.bert.modeling_bert import eager_attention_forward

    batch_size, num_queries, _ = queries.shape
    head_size = attention.attention_head_size

    def split(states: torch.Tensor) -> torch.Tensor:
        # Shape: (batch_size, heads, length, head_size)
        return states.view(batch_size, states.size(1), -1, head_size).transpose(1, 2)

    function = ALL_ATTENTION_FUNCTIONS.get_interface(
        attention.config._attn_implementation, eager_attention_forward
    )
    # Shape: (batch_size, num_queries, heads, head_size)
    context, _ = function(
        attention,
        split(attention.query(queries)),
        split(attention.key(keys)),
        split(attention.value(keys)),
        additive_mask,
        dropout=attention.dropout.p if attention.training else 0.0,
        scaling=attention.scaling,
    )
    return context.reshape(batch_size, num_queries, -1)


def _foldable(attention: Any) -> bool:
    """
    Whether `attention`'s key and value projections are plain linear layers with biases and no
    hooks.
    """
    projections = (attention.key, attention.value)
    return all(
        type(module) is torch.nn.Linear and module.bias is not None for module in projections
    ) and not _hooked(projections)


def _hooked(modules: Any) -> bool:
    return any(
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


def _folded_context(
    attention: Any,
    queries: torch.Tensor,
    keys: torch.Tensor,
    additive_mask: Optional[torch.Tensor],
) -> torch.Tensor:
    """
    `_attention_context` for a few queries (the first position) over many keys, without the
    keys' and values' projections: with `W_k`, `b_k`, `W_v`, `b_v` a head's slices,
    `q . (W_k k + b_k) = (W_k^T q) . k + q . b_k` and `sum_j w_j (W_v k_j + b_v) = W_v
    (sum_j w_j k_j) + b_v sum_j w_j`. Each head's query goes into the states' space and the
    weighted sum of the states comes out of it: a query costs `2 * width` multiply-adds of the
    states' width, plus `2 * heads` a key, where projecting the keys and values costs
    `2 * width` a key (MiniLM, 65 keys: 0.9M multiply-adds a sequence against 19M).
    """
    batch_size, num_queries, width = queries.shape
    num_keys = keys.size(1)
    heads = attention.num_attention_heads
    head_size = attention.attention_head_size
    rows = heads * num_queries

    def by_sequence(tensor: torch.Tensor) -> torch.Tensor:
        # Shape: (heads, batch_size * num_queries, n) -> (batch_size, heads * num_queries, n)
        return (
            tensor.view(heads, batch_size, num_queries, -1)
            .transpose(0, 1)
            .reshape(batch_size, rows, -1)
        )

    def by_head(tensor: torch.Tensor) -> torch.Tensor:
        # Shape: (batch_size, heads * num_queries, n) -> (heads, batch_size * num_queries, n)
        return (
            tensor.view(batch_size, heads, num_queries, -1)
            .transpose(0, 1)
            .reshape(heads, batch_size * num_queries, -1)
        )

    # Shape: (heads, batch_size * num_queries, head_size)
    query = (
        attention.query(queries).view(batch_size * num_queries, heads, head_size).transpose(0, 1)
    )
    # Shape: (batch_size, heads * num_queries, width), each head's query in the states' space.
    folded = by_sequence(torch.bmm(query, attention.key.weight.view(heads, head_size, width)))
    # Shape: (batch_size, heads * num_queries, 1): q . b_k, the same for every key (softmax
    # ignores it, but the key bias keeps the gradient transformers' attention gives it).
    base = by_sequence(torch.bmm(query, attention.key.bias.view(heads, head_size, 1)))
    if additive_mask is not None:
        # Shape: (batch_size, heads * num_queries, num_keys)
        base = base + additive_mask.view(batch_size, 1, num_keys)
    # Shape: (batch_size, heads * num_queries, num_keys)
    scores = torch.baddbmm(
        base.expand(batch_size, rows, num_keys),
        folded,
        keys.transpose(1, 2),
        alpha=head_size**-0.5,
    )
    weights = attention.dropout(torch.softmax(scores, dim=-1))
    # Shape: (heads, batch_size * num_queries, width), the weighted sums of the states.
    mixed = by_head(torch.bmm(weights, keys))
    # Shape: (heads, batch_size * num_queries, head_size)
    context = torch.bmm(mixed, attention.value.weight.view(heads, head_size, width).transpose(1, 2))
    # The dropped weights no longer sum to one: the value bias times what is left of them.
    # Shape: (heads, batch_size * num_queries, 1)
    total = by_head(weights.sum(-1, keepdim=True))
    context = context + total * attention.value.bias.view(heads, 1, head_size)
    return (
        context.view(heads, batch_size, num_queries, head_size)
        .permute(1, 2, 0, 3)
        .reshape(batch_size, num_queries, heads * head_size)
    )
