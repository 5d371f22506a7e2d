import pytest
import torch
import transformers
from allennlp.common import Params
from allennlp.modules.token_embedders import TokenEmbedder

from tests.tiny_models import write_tiny_model
from tft_allennlp.modules.token_embedders import eager_attention
from tft_allennlp.modules.token_embedders.eager_attention import _foldable, _fusable, layer_states


def tiny_layers(tmp_path, architecture, attention="eager", packed_dropout=False):
    embedder = TokenEmbedder.from_params(
        Params(
            {
                "type": "tft_pretrained_transformer",
                "model_name": write_tiny_model(architecture, str(tmp_path)),
                "attention": attention,
                "packed_dropout": packed_dropout,
            }
        )
    )
    return embedder.transformer_model.encoder.layer


def states_and_mask(layer, dtype=torch.float32):
    """Two sequences of 6 positions, the second padded after 4, and the additive mask."""
    generator = torch.Generator().manual_seed(0)
    width = layer.attention.self.query.in_features
    states = torch.randn(2, 6, width, generator=generator, requires_grad=True)
    additive = torch.zeros(2, 1, 1, 6, dtype=dtype)
    additive[1, ..., 4:] = torch.finfo(dtype).min
    return states, additive


def with_biases(layer):
    """`layer` with random attention biases (a tiny model's start at zero, hiding their terms)."""
    generator = torch.Generator().manual_seed(1)
    attention = layer.attention.self
    with torch.no_grad():
        for projection in (attention.query, attention.key, attention.value):
            projection.bias.copy_(torch.randn(projection.bias.shape, generator=generator))
    return layer


def gradients_of(output, states, layer):
    output.square().sum().backward()
    gradients = [states.grad.clone()] + [p.grad.clone() for p in layer.parameters()]
    states.grad = None
    layer.zero_grad()
    return gradients


@pytest.mark.parametrize("architecture", ["bert", "roberta"])
@pytest.mark.parametrize("padded", [True, False])
def test_the_fused_scores_give_transformers_eager_states_and_gradients(
    tmp_path, architecture, padded
):
    layer = tiny_layers(tmp_path, architecture)[0].eval()
    assert _fusable(layer)
    states, additive = states_and_mask(layer)
    additive = additive if padded else None
    expected = layer(states, attention_mask=additive)
    expected_gradients = gradients_of(expected, states, layer)
    fused = layer_states(layer, states, states, additive)
    torch.testing.assert_close(fused, expected, rtol=0, atol=1e-6)
    for gradient, expected_gradient in zip(gradients_of(fused, states, layer), expected_gradients):
        torch.testing.assert_close(gradient, expected_gradient, rtol=0, atol=1e-5)
    # The first position attending to all: transformers' cross-attention over the same input.
    first = layer_states(layer, states[:, :1], states, additive)
    torch.testing.assert_close(first, expected[:, :1], rtol=0, atol=1e-6)


def test_the_attention_weights_go_through_the_layers_own_dropout(tmp_path):
    layer = tiny_layers(tmp_path, "bert", packed_dropout=True)[0].train()
    states, additive = states_and_mask(layer)
    seen = []
    layer.attention.self.dropout.register_forward_hook(
        lambda module, inputs, output: seen.append(inputs[0].shape)
    )
    heads = layer.attention.self.num_attention_heads
    # transformers 5's eager attention drops its weights with torch's functional dropout, not
    # the layer's module; the fused scores go through the module (here packed dropout).
    torch.manual_seed(4)
    dropped = layer_states(layer, states, states, additive)
    assert seen == [(2 * heads, 6, 6)]
    # Without dropout, transformers' states.
    layer.eval()
    torch.testing.assert_close(
        layer_states(layer, states, states, additive),
        layer(states, attention_mask=additive),
        rtol=0,
        atol=1e-6,
    )
    assert not torch.allclose(dropped, layer(states, attention_mask=additive))


def test_under_bfloat16_autocast_one_rounding_of_the_scores_stays_within_bfloat16s(tmp_path):
    layer = tiny_layers(tmp_path, "bert")[0].eval()
    states, additive = states_and_mask(layer, torch.bfloat16)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        expected = layer(states, attention_mask=additive)
        fused = layer_states(layer, states, states, additive)
    assert fused.dtype == expected.dtype
    # Layer-normed states of unit scale: bfloat16 keeps 8 bits, about 0.008 at 1.
    torch.testing.assert_close(fused.float(), expected.float(), rtol=0, atol=0.05)
    # Padding stays hidden: the padded sequence's states are its states alone.
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        alone = layer_states(layer, states[1:, :4], states[1:, :4], None)
    torch.testing.assert_close(fused[1, :4].float(), alone[0].float(), rtol=0, atol=0.05)


def test_sdpa_and_hooked_attention_run_through_transformers_modules(tmp_path):
    sdpa = tiny_layers(tmp_path / "sdpa", "bert", attention="sdpa")[0]
    assert not _fusable(sdpa)
    layer = tiny_layers(tmp_path / "eager", "bert")[0].eval()
    states, additive = states_and_mask(layer)
    called = []
    layer.attention.self.register_forward_hook(lambda module, inputs, output: called.append(1))
    assert not _fusable(layer)
    output = layer_states(layer, states, states, additive)
    assert called == [1]
    torch.testing.assert_close(output, layer(states, attention_mask=additive))
    # A backward hook too: the module's own call is what runs it.
    hooked = tiny_layers(tmp_path / "backward", "bert")[0]
    hooked.attention.register_full_backward_hook(lambda module, inputs, outputs: None)
    assert not _fusable(hooked)


@pytest.mark.parametrize("architecture", ["bert", "roberta"])
def test_the_first_position_without_key_and_value_projections_gives_transformers_gradients(
    tmp_path, architecture
):
    layer = with_biases(tiny_layers(tmp_path, architecture)[0].eval())
    assert _foldable(layer.attention.self)
    states, additive = states_and_mask(layer)
    expected = layer(states, attention_mask=additive)[:, :1]
    expected_gradients = gradients_of(expected, states, layer)
    first = layer_states(layer, states[:, :1], states, additive)
    torch.testing.assert_close(first, expected, rtol=0, atol=1e-6)
    # Every parameter's gradient, the key bias's (zero up to rounding) among them.
    for gradient, expected_gradient in zip(gradients_of(first, states, layer), expected_gradients):
        torch.testing.assert_close(gradient, expected_gradient, rtol=0, atol=1e-5)


def test_the_first_positions_dropped_weights_still_carry_the_value_bias(tmp_path, monkeypatch):
    layer = with_biases(tiny_layers(tmp_path, "bert", packed_dropout=True)[0].train())
    states, additive = states_and_mask(layer)
    torch.manual_seed(5)
    folded = layer_states(layer, states[:, :1], states, additive)
    # The projected keys and values, with the same dropout masks in the same order.
    monkeypatch.setattr(eager_attention, "_foldable", lambda attention: False)
    torch.manual_seed(5)
    projected = layer_states(layer, states[:, :1], states, additive)
    torch.testing.assert_close(folded, projected, rtol=0, atol=1e-6)
    torch.manual_seed(6)
    assert not torch.allclose(layer_states(layer, states[:, :1], states, additive), projected)


def test_the_first_position_under_bfloat16_stays_within_bfloat16s_rounding(tmp_path):
    layer = with_biases(tiny_layers(tmp_path, "roberta")[0].eval())
    states, additive = states_and_mask(layer, torch.bfloat16)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        expected = layer(states, attention_mask=additive)[:, :1]
        first = layer_states(layer, states[:, :1], states, additive)
    torch.testing.assert_close(first.float(), expected.float(), rtol=0, atol=0.05)


def test_replaced_or_hooked_projections_and_other_attention_functions_stay_transformers(tmp_path):
    layer = tiny_layers(tmp_path, "bert")[0].eval()
    states, additive = states_and_mask(layer)
    expected = layer(states, attention_mask=additive)[:, :1]
    # A key projection with more to it than its weight (as a low-rank adapter's would be).
    called = []
    layer.attention.self.key.register_forward_hook(lambda module, inputs, output: called.append(1))
    assert _fusable(layer) and not _foldable(layer.attention.self)
    torch.testing.assert_close(layer_states(layer, states[:, :1], states, additive), expected)
    assert called == [1]
    # A value projection without a bias.
    unbiased = tiny_layers(tmp_path / "unbiased", "bert")[0].eval()
    unbiased.attention.self.value.bias = None
    assert not _foldable(unbiased.attention.self)
    torch.testing.assert_close(
        layer_states(unbiased, states[:, :1], states, additive),
        unbiased(states, attention_mask=additive)[:, :1],
    )
    # Another attention implementation (SDPA) runs the first position through transformers'
    # attention function, its queries from that position alone.
    config = transformers.BertConfig(
        hidden_size=32, num_attention_heads=2, intermediate_size=64, attn_implementation="sdpa"
    )
    sdpa = with_biases(transformers.models.bert.modeling_bert.BertLayer(config).eval())
    assert not _fusable(sdpa)
    torch.testing.assert_close(
        layer_states(sdpa, states[:, :1], states, additive),
        sdpa(states, attention_mask=additive)[:, :1],
        rtol=0,
        atol=1e-6,
    )
