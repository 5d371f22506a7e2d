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


def test_each_random_word_gives_four_16_bit_numbers_compared_with_the_rate():
    torch.manual_seed(7)
    dropped, scale = packed_dropout_mask(torch.Size([2, 5]), 0.1)
    assert scale == SCALE
    # By hand from the same generator: three 64-bit words, each four 16-bit two's-complement
    # numbers from the lowest bits up; an element is dropped where its number is below
    # 6554 - 32768.
    torch.manual_seed(7)
    words = torch.empty(3, dtype=torch.int64).random_(-(2**63), 2**63 - 1).tolist()
    expected = []
    for word in words:
        for quarter in range(4):
            number = (word >> (16 * quarter)) & 0xFFFF
            signed = number - 65536 if number >= 32768 else number
            expected.append(signed < THRESHOLD - 32768)
    assert dropped.flatten().tolist() == expected[:10]
    # The generator moved on by exactly those three words.
    torch.manual_seed(7)
    torch.empty(3, dtype=torch.int64).random_(-(2**63), 2**63 - 1)
    after = torch.rand(1)
    torch.manual_seed(7)
    packed_dropout_mask(torch.Size([2, 5]), 0.1)
    assert torch.equal(torch.rand(1), after)


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


def test_the_gradient_goes_through_the_kept_elements_scaled():
    layer = PackedDropout(0.25).train()
    inputs = torch.randn(3, 4, 50, requires_grad=True)
    upstream = torch.randn(3, 4, 50)
    torch.manual_seed(1)
    output = layer(inputs)
    output.backward(upstream)
    torch.manual_seed(1)
    dropped, scale = packed_dropout_mask(inputs.shape, 0.25)
    assert scale == 65536 / (65536 - 16384)
    torch.testing.assert_close(output, torch.where(dropped, 0.0, inputs * scale), rtol=0, atol=0)
    torch.testing.assert_close(
        inputs.grad, torch.where(dropped, 0.0, upstream * scale), rtol=0, atol=0
    )
    # bfloat16 inputs stay bfloat16, both ways.
    half = inputs.detach().bfloat16().requires_grad_()
    layer(half).sum().backward()
    assert layer(half).dtype == half.grad.dtype == torch.bfloat16


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
