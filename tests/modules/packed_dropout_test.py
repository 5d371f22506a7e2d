import os

import pytest
import torch
from allennlp.common import Params
from allennlp.modules.token_embedders import TokenEmbedder

from tests.tiny_models import write_tiny_model
from tft_allennlp.modules.packed_dropout import PackedDropout, packed_dropout_mask

# p = 0.1 drops a 16-bit number below round(0.1 * 65536) = 6554 places above the lowest.
THRESHOLD = 6554
SCALE = 65536 / (65536 - 6554)


MASK64 = (1 << 64) - 1


def sfc64(a: int, b: int, c: int, counter: int, count: int) -> list:
    """Chris Doty-Humphrey's SFC64 by its definition: `count` outputs from state (a, b, c)."""
    outputs = []
    for _ in range(count):
        output = (a + b + counter) & MASK64
        counter += 1
        a = b ^ (b >> 11)
        b = (c + (c << 3)) & MASK64
        c = (((c << 24) | (c >> 40)) + output) & MASK64
        outputs.append(output)
    return outputs


def test_each_random_word_gives_four_16_bit_numbers_compared_with_the_rate():
    torch.manual_seed(7)
    kept, scale = packed_dropout_mask(torch.Size([2, 5]), 0.1)
    assert scale == SCALE
    # One byte an element (what the backward pass keeps): -1 (all bits) kept, 0 dropped.
    assert kept.dtype == torch.int8
    # By hand: three words of PyTorch's generator are SFC64's state, with a counter of 1; its
    # first 12 outputs are discarded; each later word gives four 16-bit two's-complement
    # numbers from the lowest bits up; an element is dropped where its number is below
    # 6554 - 32768.
    torch.manual_seed(7)
    seed = torch.empty(3, dtype=torch.int64).random_(-(2**63), 2**63 - 1).tolist()
    words = sfc64(*[word & MASK64 for word in seed], 1, 12 + 3)[12:]
    expected = []
    for word in words:
        for quarter in range(4):
            number = (word >> (16 * quarter)) & 0xFFFF
            signed = number - 65536 if number >= 32768 else number
            expected.append(0 if signed < THRESHOLD - 32768 else -1)
    assert kept.flatten().tolist() == expected[:10]
    # PyTorch's generator moved on by exactly the three words of the state.
    torch.manual_seed(7)
    torch.empty(3, dtype=torch.int64).random_(-(2**63), 2**63 - 1)
    after = torch.rand(1)
    torch.manual_seed(7)
    packed_dropout_mask(torch.Size([2, 5]), 0.1)
    assert torch.equal(torch.rand(1), after)


def test_16_bit_values_keep_the_same_mask_at_two_bytes():
    torch.manual_seed(5)
    kept, scale = packed_dropout_mask(torch.Size([3, 70]), 0.1)
    torch.manual_seed(5)
    wide, wide_scale = packed_dropout_mask(torch.Size([3, 70]), 0.1, torch.int16)
    assert wide.dtype == torch.int16 and wide_scale == scale
    assert torch.equal(wide, kept.to(torch.int16))
    # What a bfloat16 input's forward keeps for its backward: the 16-bit mask.
    half = torch.randn(3, 70, dtype=torch.bfloat16, requires_grad=True)
    torch.manual_seed(5)
    output = PackedDropout(0.1).train()(half)
    assert torch.equal(output.grad_fn.saved_tensors[0], wide)


def test_the_rate_and_the_expected_output_are_dropouts():
    torch.manual_seed(0)
    layer = PackedDropout(0.1).train()
    ones = torch.ones(1_000, 1_000)
    output = layer(ones)
    dropped = output == 0
    # Kept elements are scaled by the inverse of the rounded keep rate; the rest are zero.
    assert torch.equal(output[~dropped], torch.full_like(output[~dropped], SCALE))
    rate = dropped.double().mean().item()
    # 4 standard deviations of a rate over 10^6 draws: 0.0012.
    assert abs(rate - THRESHOLD / 65536) < 0.0012
    assert abs(output.double().mean().item() - 1.0) < 0.0014


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_the_gradient_goes_through_the_kept_elements_scaled(dtype):
    layer = PackedDropout(0.25).train()
    inputs = torch.randn(3, 4, 50, dtype=dtype)
    inputs[0, 0, :4] = torch.tensor([-0.0, float("inf"), -float("inf"), float("nan")])
    inputs.requires_grad_()
    upstream = torch.randn(3, 4, 50, dtype=dtype)
    torch.manual_seed(1)
    output = layer(inputs)
    output.backward(upstream)
    torch.manual_seed(1)
    kept, scale = packed_dropout_mask(inputs.shape, 0.25)
    assert scale == 65536 / (65536 - 16384)
    dropped = kept == 0
    # Dropped elements are +0.0 whatever they were (a NaN too), as PyTorch's dropout does not
    # promise; the kept ones exactly the input times the scale.
    expected = torch.where(dropped, 0.0, inputs.detach() * scale)
    torch.testing.assert_close(output, expected, rtol=0, atol=0, equal_nan=True)
    assert not torch.signbit(output[dropped]).any()
    torch.testing.assert_close(
        inputs.grad, torch.where(dropped, 0.0, upstream * scale), rtol=0, atol=0
    )
    assert output.dtype == inputs.grad.dtype == dtype


def test_bfloat16_stays_bfloat16_both_ways_through_a_broadcast_gradient():
    layer = PackedDropout(0.1).train()
    half = torch.randn(3, 4, 50, dtype=torch.bfloat16, requires_grad=True)
    torch.manual_seed(2)
    output = layer(half)
    # The gradient of a sum reaches the layer as an expanded (stride 0) tensor of ones.
    output.sum().backward()
    assert output.dtype == half.grad.dtype == torch.bfloat16
    torch.manual_seed(2)
    kept, scale = packed_dropout_mask(half.shape, 0.1)
    assert torch.equal(half.grad, -kept.to(torch.bfloat16) * scale)


def test_evaluation_and_rates_of_0_and_1_are_pytorchs():
    inputs = torch.randn(4, 8)
    assert torch.equal(PackedDropout(0.1).eval()(inputs), inputs)
    assert torch.equal(PackedDropout(0.0).train()(inputs), inputs)
    assert torch.equal(PackedDropout(1.0).train()(inputs), torch.zeros_like(inputs))


@pytest.mark.parametrize("attention", ["eager", "sdpa"])
def test_the_embedder_packs_every_dropout_layer_of_the_encoder(tmp_path, attention):
    model_name = write_tiny_model("bert", str(tmp_path))
    params = {
        "type": "tft_pretrained_transformer",
        "model_name": model_name,
        "attention": attention,
        "packed_dropout": True,
    }
    embedder = TokenEmbedder.from_params(Params(dict(params)))
    layers = [m for m in embedder.transformer_model.modules() if isinstance(m, torch.nn.Dropout)]
    # The tiny BERT's two layers: the embeddings' dropout, then each layer's attention weights',
    # attention output's and feed-forward output's.
    assert len(layers) == 1 + 2 * 3
    assert all(type(m) is PackedDropout for m in layers)
    ids = torch.randint(5, 60, (2, 6))
    mask = torch.ones(2, 6, dtype=torch.bool)
    embedder.train()
    torch.manual_seed(3)
    first = embedder(ids, mask)
    torch.manual_seed(3)
    assert torch.equal(embedder(ids, mask), first)
    assert not torch.allclose(embedder(ids, mask), first)
    with torch.no_grad():
        unpacked = TokenEmbedder.from_params(Params({**params, "packed_dropout": False})).eval()
        unpacked.load_state_dict(embedder.state_dict())
        assert torch.equal(embedder.eval()(ids, mask), unpacked(ids, mask))


def test_without_the_option_the_layers_stay_pytorchs():
    embedder = TokenEmbedder.from_params(
        Params({"type": "tft_pretrained_transformer", "model_name": os.environ["TFT_MODEL"]})
    )
    assert not any(isinstance(m, PackedDropout) for m in embedder.modules())
