"""
`tft_host_patches.host_state`: the plugin's embedder leaves no second copy of its transformer in
AllenNLP's module cache, and the compile callback's fallback to eager code is recorded as a patch.
"""

import torch
import torch._dynamo
from allennlp.common import cached_transformers

import tft_host_patches
from tests.tiny_models import write_tiny_model
from tft_allennlp.modules.token_embedders.pretrained_transformer_embedder import (
    TftPretrainedTransformerEmbedder,
)
from tft_host_patches.host_state import forget_cached_transformer, run_failed_graphs_eagerly


def cached(model_name: str) -> int:
    return sum(spec.model_name == model_name for spec in cached_transformers._model_cache)


def test_the_embedder_leaves_no_copy_in_allennlps_cache(tmp_path):
    model = write_tiny_model("bert", str(tmp_path / "bert"))
    # AllenNLP's own loading keeps the model it copies from.
    copy = cached_transformers.get(model, make_copy=True)
    assert cached(model) == 1
    forget_cached_transformer(model)
    assert cached(model) == 0
    embedder = TftPretrainedTransformerEmbedder(model)
    assert cached(model) == 0
    # Forgetting the cache's model kept the embedder's own.
    for name, weight in copy.named_parameters():
        if name.startswith("pooler."):  # the embedder drops the pooler
            continue
        torch.testing.assert_close(
            embedder.transformer_model.get_parameter(name), weight, rtol=0, atol=0
        )


def test_failed_graphs_run_eagerly_as_a_recorded_patch():
    # torch's own way to set its config for a while (pytest's monkeypatch deletes the entry).
    with torch._dynamo.config.patch(suppress_errors=False):
        run_failed_graphs_eagerly()
        assert torch._dynamo.config.suppress_errors is True
    assert ("torch._dynamo.config.suppress_errors", "host_state") in tft_host_patches.replaced()
