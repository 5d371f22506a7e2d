"""
What AllenNLP 2.10.1 (written against transformers 4.x and huggingface-hub 0.x) needs of today's
Hugging Face stack (the lock's transformers 5, huggingface-hub 2), each put in place just before
or after the AllenNLP module that needs it runs (`import_hooks`), so that nothing here imports a
Hugging Face library early. Each paragraph: the versions, the gap, how to remove it.

**`huggingface_hub.HfFolder` and `Repository`** (removed in huggingface-hub 1.0):
`allennlp.common` imports `allennlp.common.push_to_hf` at package import, whose first line imports
both, so without them no AllenNLP module imports at all. Before that module runs, `HfFolder`
gets a stand-in whose `get_token` is the hub's `get_token`, and `Repository` one that refuses in
one line (`allennlp push-to-hf` clones a git repository through it; the hub's `upload_folder`
replaced it, and `allennlp tft-export` writes a folder that uploads as it is). Remove when
AllenNLP stops importing them, or with `push-to-hf` rewritten on `upload_folder`
(`tests/host_patches/huggingface_stack_test.py`).

**`transformers.AdamW`** (removed in transformers 4.50): `allennlp.training.optimizers` subclasses
it for its `huggingface_adamw` optimizer at import. Before that module runs, the `transformers`
module then in `sys.modules` (transformers replaces its own module object the first time its
processing code imports, so it is set there and then, not earlier) gets `HuggingfaceAdamW`: torch's
AdamW, which is what the removed class had become, taking its `correct_bias=True`;
`correct_bias=False` (no bias correction, which torch's AdamW has no switch for) is refused in one
line. Remove when AllenNLP drops `huggingface_adamw`.

**`add_special_tokens=` to `AutoTokenizer.from_pretrained`** (refused since transformers 4.44,
"add_special_tokens conflicts with the method add_special_tokens"): AllenNLP's
`PretrainedTransformerTokenizer` asks `cached_transformers.get_tokenizer` for a tokenizer with
`add_special_tokens=False` and always passes `add_special_tokens` again to each encoding call, so
the keyword never changed an encoding. After `allennlp.common.cached_transformers` runs, its
`get_tokenizer` drops that keyword (the two tokenizers it asked for become one cached instance).
Remove when AllenNLP's tokenizer stops passing it.

**Tokenizers' `encode_plus`** (removed in transformers 5, which encodes through `__call__`):
AllenNLP's `PretrainedTransformerTokenizer` encodes every text, and reverse-engineers a tokenizer's
special tokens, with `encode_plus(text, text_pair, **options)`. Once
`transformers.tokenization_utils_base` runs, `PreTrainedTokenizerBase` gets an `encode_plus`
that is its `__call__` with the same arguments (what transformers 4's `encode_plus` did for one
text or pair). Remove when AllenNLP's tokenizer calls the tokenizer itself.
"""

import types
from typing import Any, Dict

from tft_host_patches import import_hooks, replace

PATCH = "huggingface_stack"


class _RemovedRepository:
    """`huggingface_hub.Repository`, removed in huggingface-hub 1.0: refuses in one line."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            "allennlp push-to-hf needs huggingface_hub.Repository, which huggingface-hub 1.0 "
            "removed; upload the folder instead: `allennlp tft-export ARCHIVE DIR`, then "
            "`hf upload REPO DIR`"
        )


class _HfFolder:
    """`huggingface_hub.HfFolder`, removed in huggingface-hub 1.0: its token lookup."""

    @staticmethod
    def get_token() -> Any:
        import huggingface_hub

        return huggingface_hub.get_token()


def _hub_names(module: types.ModuleType) -> None:
    import huggingface_hub

    for name, stand_in in (("HfFolder", _HfFolder), ("Repository", _RemovedRepository)):
        if not hasattr(huggingface_hub, name):
            replace(huggingface_hub, name, stand_in, patch=PATCH)


def _adamw_class() -> type:
    import torch

    class HuggingfaceAdamW(torch.optim.AdamW):
        """transformers' removed `AdamW`: torch's, with bias correction (`correct_bias=True`)."""

        def __init__(self, *args: Any, correct_bias: bool = True, **kwargs: Any) -> None:
            if not correct_bias:
                raise ValueError(
                    "huggingface_adamw: correct_bias false is not supported on this stack "
                    "(transformers removed its AdamW); use the optimizer 'adamw'"
                )
            super().__init__(*args, **kwargs)

    return HuggingfaceAdamW


def _transformers_adamw(module: types.ModuleType) -> None:
    # `import` binds the module object in `sys.modules` now, whichever transformers swapped in.
    import transformers

    if not _has(transformers, "AdamW"):
        replace(transformers, "AdamW", _adamw_class(), patch=PATCH)


def _has(module: types.ModuleType, name: str) -> bool:
    try:
        getattr(module, name)
    except (AttributeError, ImportError, RuntimeError):
        return False
    return True


def _tokenizer_keyword(cached_transformers: types.ModuleType) -> None:
    get_tokenizer = cached_transformers.get_tokenizer

    def get_tokenizer_without_add_special_tokens(model_name: str, **kwargs: Dict[str, Any]) -> Any:
        kwargs.pop("add_special_tokens", None)
        return get_tokenizer(model_name, **kwargs)

    replace(
        cached_transformers, "get_tokenizer", get_tokenizer_without_add_special_tokens, patch=PATCH
    )


def _encode_plus(tokenization_utils_base: types.ModuleType) -> None:
    base = tokenization_utils_base.PreTrainedTokenizerBase
    if "encode_plus" in vars(base):
        return

    def encode_plus(self: Any, *args: Any, **kwargs: Any) -> Any:
        """transformers 4's `encode_plus`: one text or pair, encoded by `__call__`."""
        return self(*args, **kwargs)

    replace(base, "encode_plus", encode_plus, patch=PATCH)


def install() -> None:
    """Registers each mend to run when its AllenNLP module is imported (at once if it is)."""
    import_hooks.before_import("allennlp.common.push_to_hf", _hub_names)
    import_hooks.before_import("allennlp.training.optimizers", _transformers_adamw)
    import_hooks.after_import("allennlp.common.cached_transformers", _tokenizer_keyword)
    import_hooks.after_import("transformers.tokenization_utils_base", _encode_plus)
