import os

import pytest
import torch
from allennlp.common import Params
from allennlp.modules.token_embedders import TokenEmbedder

from tests.tiny_models import write_tiny_model


def build(**kwargs):
    params = {"type": "tft_pretrained_transformer", "model_name": os.environ["TFT_MODEL"], **kwargs}
    return TokenEmbedder.from_params(Params(params))


def test_the_pooler_is_dropped_unless_kept():
    assert build().transformer_model.pooler is None
    assert build(keep_pooler=True).transformer_model.pooler is not None


def test_an_empty_batch_gives_empty_hidden_states():
    embedder = build()
    ids = torch.zeros(0, 7, dtype=torch.long)
    hidden = embedder(
        ids, torch.ones(0, 7, dtype=torch.bool), type_ids=torch.zeros(0, 7, dtype=torch.long)
    )
    assert hidden.shape == (0, 7, embedder.get_output_dim())
    # A real batch with segment ids still goes through AllenNLP's own handling of them.
    ids = torch.tensor([[2, 40, 3, 41, 3]])
    hidden = embedder(
        ids, torch.ones(1, 5, dtype=torch.bool), type_ids=torch.tensor([[0, 0, 0, 1, 1]])
    )
    assert hidden.shape == (1, 5, embedder.get_output_dim())


def pair_batch(embedder, type_ids: bool):
    """Two pairs of 7 wordpieces, the second padded after 4."""
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(
        5, embedder.transformer_model.config.vocab_size, (2, 7), generator=generator
    )
    mask = torch.ones(2, 7, dtype=torch.bool)
    mask[1, 4:] = False
    types = torch.tensor([[0, 0, 0, 1, 1, 1, 1], [0, 0, 1, 1, 0, 0, 0]]) if type_ids else None
    return ids, mask, types


@pytest.mark.parametrize(
    "architecture, fast, adapters",
    [
        ("bert", True, False),
        ("roberta", True, False),
        ("bert", True, True),
        ("distilbert", False, False),
    ],
)
def test_first_token_only_gives_the_first_final_state_and_its_gradients(
    tmp_path, architecture, fast, adapters
):
    options = {"model_name": write_tiny_model(architecture, str(tmp_path))}
    if adapters:
        options["adapters"] = {"type": "tft_bottleneck", "bottleneck": 4, "init_std": 0.5}
    torch.manual_seed(0)
    # Without dropout both passes compute the same function.
    embedder = build(**options).eval()
    assert embedder._first_token_path() is fast
    batch = pair_batch(embedder, type_ids=architecture == "bert")
    # What the last layer's feed-forward output projection sees: (batch, positions, width).
    seen = []
    model = embedder.transformer_model
    projection = (
        model.encoder.layer[-1].output.dense if fast else model.transformer.layer[-1].ffn.lin2
    )
    projection.register_forward_hook(lambda module, inputs, output: seen.append(inputs[0].shape))

    full = embedder(*batch)[:, :1]
    full.square().sum().backward()
    full_gradients = {
        n: p.grad.clone() for n, p in embedder.named_parameters() if p.grad is not None
    }
    embedder.zero_grad()
    first = embedder(*batch, first_token_only=True)
    first.square().sum().backward()

    assert first.shape == (2, 1, embedder.get_output_dim())
    assert torch.allclose(first, full, atol=1e-5)
    assert full_gradients and all(
        torch.allclose(p.grad, full_gradients[n], atol=1e-5)
        for n, p in embedder.named_parameters()
        if n in full_gradients
    )
    # The fast path computes the last layer's feed-forward for the first position alone.
    assert seen[1][:2] == ((2, 1) if fast else (2, 7))


def test_both_attention_implementations_compute_the_same_states():
    ids, mask, types = pair_batch(build(), type_ids=True)
    states = {}
    for attention in ("eager", "sdpa"):
        embedder = build(attention=attention).eval()
        assert embedder.transformer_model.config._attn_implementation == attention
        with torch.no_grad():
            states[attention] = embedder(ids, mask, type_ids=types)
            # The first-token path's cross-attention runs through the same implementation.
            first = embedder(ids, mask, type_ids=types, first_token_only=True)
        torch.testing.assert_close(first[:, 0], states[attention][:, 0], rtol=0, atol=1e-5)
    torch.testing.assert_close(states["eager"], states["sdpa"], rtol=0, atol=1e-5)
    # By default, transformers' own choice: SDPA for BERT.
    assert build().transformer_model.config._attn_implementation == "sdpa"


def test_an_unknown_attention_implementation_is_one_line():
    with pytest.raises(Exception, match=r"attention 'flash': not one of \['sdpa', 'eager'\]"):
        build(attention="flash")


def test_under_autocast_the_attention_weights_stay_in_autocasts_dtype():
    # A float32 padding mask would turn the bfloat16 attention scores, their softmax and
    # dropout to float32 (and each back again for the next matrix product).
    embedder = build(attention="eager").eval()
    ids, mask, types = pair_batch(embedder, type_ids=True)
    seen = []
    for layer in embedder.transformer_model.encoder.layer:
        layer.attention.self.dropout.register_forward_hook(
            lambda module, inputs, output: seen.append(inputs[0].dtype)
        )
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        first = embedder(ids, mask, type_ids=types, first_token_only=True)
        # The padded pair alone, without its padding.
        alone = embedder(ids[1:, :4], mask[1:, :4], type_ids=types[1:, :4], first_token_only=True)
    assert len(seen) == 2 * len(embedder.transformer_model.encoder.layer)
    assert set(seen) == {torch.bfloat16}
    # The bfloat16 mask still hides the padding: the padded pair's state is its state alone, to
    # bfloat16's rounding (attending to the padding moves it by 0.67).
    torch.testing.assert_close(first[1], alone[0], rtol=0, atol=0.05)
