import pytest
import torch
from allennlp.common import Params
from allennlp.modules.span_extractors import MaxPoolingSpanExtractor as AllenNlpMaxPooling
from allennlp.modules.span_extractors import SpanExtractor

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
