import pytest
import torch
from allennlp.common import Params
from allennlp.modules.span_extractors import MaxPoolingSpanExtractor as AllenNlpMaxPooling
from allennlp.modules.span_extractors import SpanExtractor
from allennlp.nn import util

# Shape: (batch_size=2, sequence_length=4, input_dim=2)
SEQUENCE = torch.tensor(
    [
        [[1.0, -1.0], [3.0, 0.0], [-2.0, 5.0], [0.0, 0.0]],
        [[2.0, 2.0], [4.0, -4.0], [1.0, 1.0], [7.0, 7.0]],
    ]
)
# Shape: (2, num_spans=2, 2); the second instance has one real span and one padding span.
SPANS = torch.tensor([[[0, 1], [1, 2]], [[3, 3], [-1, -1]]])
SPAN_MASK = SPANS[:, :, 0] >= 0


def build(name):
    return SpanExtractor.from_params(Params({"type": name, "input_dim": 2}))


def test_max_pooling_by_hand():
    extractor = build("tft_max_pooling")
    assert extractor.get_input_dim() == extractor.get_output_dim() == 2
    pooled = extractor(SEQUENCE, SPANS, span_indices_mask=SPAN_MASK)
    expected = torch.tensor([[[3.0, 0.0], [3.0, 5.0]], [[7.0, 7.0], [0.0, 0.0]]])
    assert torch.equal(pooled, expected)


def test_mean_pooling_by_hand():
    pooled = build("tft_mean_pooling")(SEQUENCE, SPANS, span_indices_mask=SPAN_MASK)
    expected = torch.tensor([[[2.0, -0.5], [0.5, 2.5]], [[7.0, 7.0], [0.0, 0.0]]])
    assert torch.allclose(pooled, expected)


def test_allennlp_max_pooling_fails_on_the_padding_ours_does_not():
    with pytest.raises(IndexError):
        AllenNlpMaxPooling(2)(SEQUENCE, SPANS, span_indices_mask=SPAN_MASK)
    assert build("tft_max_pooling")(SEQUENCE, SPANS, span_indices_mask=SPAN_MASK).shape == (2, 2, 2)


def test_sequence_mask_excludes_padding_tokens():
    sequence_mask = torch.tensor([[True, True, False, False], [True, True, True, True]])
    pooled = build("tft_mean_pooling")(SEQUENCE, SPANS, sequence_mask, SPAN_MASK)
    assert torch.allclose(pooled[0, 1], SEQUENCE[0, 1])


@pytest.mark.parametrize("name", ["tft_max_pooling", "tft_mean_pooling"])
def test_unmasked_bad_spans_raise(name):
    with pytest.raises(IndexError, match="out of range"):
        build(name)(SEQUENCE, torch.tensor([[[0, 4]], [[0, 0]]]))
    with pytest.raises(IndexError, match="out of range"):
        build(name)(SEQUENCE, torch.tensor([[[2, 1]], [[0, 0]]]))


def test_width_embeddings_add_to_the_output():
    extractor = SpanExtractor.from_params(
        Params(
            {
                "type": "tft_mean_pooling",
                "input_dim": 2,
                "num_width_embeddings": 4,
                "span_width_embedding_dim": 3,
            }
        )
    )
    assert extractor.get_output_dim() == 5
    assert extractor(SEQUENCE, SPANS, span_indices_mask=SPAN_MASK).shape == (2, 2, 5)


def padded_pooling(name, sequence, spans, sequence_mask, span_mask):
    """AllenNLP's way: every span padded to the longest one, then masked max or mean."""
    spans = spans * span_mask.unsqueeze(-1).long()
    vectors, mask = util.batched_span_select(sequence, spans)
    tokens = util.batched_span_select(sequence_mask.unsqueeze(-1), spans)[0].squeeze(-1)
    mask = (mask & tokens.bool()).unsqueeze(-1)
    pool = util.masked_max if name == "tft_max_pooling" else util.masked_mean
    return pool(vectors, mask, dim=-2) * span_mask.unsqueeze(-1)


def random_spans(seed: int):
    """A sequence `(3, 12, 2)`, spans `(3, 5, 2)` of 1-5 tokens, about a third of them padding
    (`-1`), and the mask of the real ones."""
    generator = torch.Generator().manual_seed(seed)
    batch_size, length, num_spans = 3, 12, 5
    sequence = torch.randn(batch_size, length, 2, generator=generator)
    starts = torch.randint(0, length, (batch_size, num_spans), generator=generator)
    widths = torch.randint(1, 6, (batch_size, num_spans), generator=generator)
    spans = torch.stack([starts, (starts + widths - 1).clamp(max=length - 1)], dim=-1)
    span_mask = torch.rand(batch_size, num_spans, generator=generator) > 0.3
    spans[~span_mask] = -1
    return sequence, spans, span_mask


@pytest.mark.parametrize("name", ["tft_max_pooling", "tft_mean_pooling"])
def test_packed_pooling_matches_padded_pooling_with_its_gradients(name):
    sequence, spans, span_mask = random_spans(seed=0)
    batch_size, length, _ = sequence.shape
    # The last instance is shorter: its padding tokens are left out of the spans covering them.
    sequence_mask = torch.ones(batch_size, length, dtype=torch.bool)
    sequence_mask[-1, 8:] = False
    spans[-1, 0] = torch.tensor([6, 10])
    span_mask[-1, 0] = True
    outputs, gradients = [], []
    for packed in (True, False):
        leaf = sequence.clone().requires_grad_()
        if packed:
            pooled = build(name)(leaf, spans, sequence_mask, span_mask)
        else:
            pooled = padded_pooling(name, leaf, spans, sequence_mask, span_mask)
        (pooled * torch.arange(pooled.numel()).view_as(pooled)).sum().backward()
        outputs.append(pooled)
        gradients.append(leaf.grad)
    assert torch.allclose(outputs[0], outputs[1], atol=1e-6)
    assert torch.allclose(gradients[0], gradients[1], atol=1e-6)
    # Padded spans are zeros; the packed span of tokens 6-10 pools tokens 6 and 7 only.
    assert not outputs[0][~span_mask].any()
    kept = sequence[-1, 6:8]
    assert torch.allclose(outputs[0][-1, 0], kept.max(0).values if "max" in name else kept.mean(0))


def test_a_span_whose_tokens_are_all_masked_is_zeros():
    sequence_mask = torch.tensor([[True, False, False, False], [True, True, True, True]])
    for name in ("tft_max_pooling", "tft_mean_pooling"):
        pooled = build(name)(SEQUENCE, SPANS, sequence_mask, SPAN_MASK)
        assert torch.equal(pooled[0, 1], torch.zeros(2))


@pytest.mark.parametrize("name", ["tft_max_pooling", "tft_mean_pooling"])
def test_the_path_torch_compile_traces_pools_the_same_in_one_graph(name):
    """Compiled, the extractor pools from tables over the sequence, not the packed tokens: same
    values, same gradients, one graph without a break."""
    sequence, spans, span_mask = random_spans(seed=1)
    batch_size, length, _ = sequence.shape
    sequence_mask = torch.ones(batch_size, length, dtype=torch.bool)
    sequence_mask[-1, 8:] = False
    spans[-1, 0] = torch.tensor([6, 10])  # partly padding
    spans[-1, 1] = torch.tensor([9, 11])  # all padding: zeros
    span_mask[-1, :2] = True
    extractor = build(name)
    explained = torch._dynamo.explain(extractor)(sequence, spans, sequence_mask, span_mask)
    assert (explained.graph_count, explained.graph_break_count) == (1, 0)
    outputs, gradients = [], []
    for pool in (extractor, torch.compile(extractor, backend="aot_eager")):
        leaf = sequence.clone().requires_grad_()
        pooled = pool(leaf, spans, sequence_mask, span_mask)
        (pooled * torch.arange(pooled.numel()).view_as(pooled)).sum().backward()
        outputs.append(pooled.detach())
        gradients.append(leaf.grad)
    torch._dynamo.reset()
    torch.testing.assert_close(outputs[1], outputs[0], rtol=0, atol=1e-6)
    torch.testing.assert_close(gradients[1], gradients[0], rtol=0, atol=1e-6)
    assert not outputs[1][-1, 1].any() and not outputs[1][~span_mask].any()
