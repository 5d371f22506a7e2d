"""
The two changes the plugin makes to its hosts' module state rather than to their functions,
each at the moment it is needed, so that the index of patches lists them with the rest.

**AllenNLP's transformer cache, emptied of the model just built** (AllenNLP 2.10.1,
`allennlp.common.cached_transformers._model_cache`): AllenNLP's `PretrainedTransformerEmbedder`
loads its transformer through a module-level cache and keeps a copy, so the cache holds a second
model of every checkpoint an embedder loaded, for the life of the process (a second MiniLM, 90 MB,
in every `allennlp predict`; a second base model in every grid run of `tft-experiment`). Nothing
reads that entry again: the plugin's embedder builds its transformer once and other components
read only the config and tokenizer. `forget_cached_transformer`, which the plugin's embedder calls
once it is built, deletes the entries of that checkpoint. Remove when AllenNLP stops caching
models it copies (`tests/host_patches/host_state_test.py`).

**torch's compiler falls back to eager code on an error** (torch 2.x,
`torch._dynamo.config.suppress_errors`): by default a graph that fails to compile in the middle of
training ends the run with the compiler's traceback. The `tft_compile_encoders` callback, once it
has compiled, sets it so that such a graph runs eagerly (with dynamo's own warning) and training
goes on: `run_failed_graphs_eagerly`. It is process-wide, which is what the callback's process is
for. Remove when torch falls back by default (`tests/host_patches/host_state_test.py`).
"""

from typing import Any

from tft_host_patches import replace

PATCH = "host_state"


def forget_cached_transformer(model_name: str) -> None:
    """Deletes AllenNLP's cached copies of the transformer `model_name` (see above)."""
    from allennlp.common import cached_transformers

    cache: Any = cached_transformers._model_cache
    for spec in [spec for spec in cache if spec.model_name == model_name]:
        del cache[spec]


def run_failed_graphs_eagerly() -> None:
    """Sets `torch._dynamo.config.suppress_errors` (see above), recorded as this patch's."""
    import torch._dynamo

    if not torch._dynamo.config.suppress_errors:
        replace(torch._dynamo.config, "suppress_errors", True, patch=PATCH)
