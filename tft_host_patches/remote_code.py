"""
A checkpoint's own code runs only for the models the user names.

**transformers' question about remote code** (every transformers version with `trust_remote_code`;
5.25 here): a checkpoint whose `config.json` or `tokenizer_config.json` maps a class to its own
Python files (`auto_map`: EuroBERT, NeoBERT and other hub models whose classes transformers lacks)
loads only with `trust_remote_code=True`. AllenNLP never passes that keyword, so transformers asks
on the terminal ("Do you wish to run the custom code? [y/N]", for 15 seconds) where there is one,
and fails in a traceback where there is none: a distributed worker, a grid's run or `allennlp
predict` in a script either hangs on the question or dies in it. Wherever transformers resolves
that keyword, this patch answers for the user instead: yes for the models named in
`TFT_TRUST_REMOTE_CODE` (a comma-separated list of hub names or checkpoint folders, written as the
config writes `model_name`), no for every other, and never a question. The plugin's components
refuse an unnamed model with remote code in one line before transformers gets there
(`tft_allennlp.common.transformer_source`); a model archive never runs code, whatever the variable
says (docs/security.md). Remove when AllenNLP passes `trust_remote_code` through its components
and the plugin's own loading passes it too (`tests/host_patches/remote_code_test.py`).
"""

import os
import sys
import types
from typing import Any, List

from tft_host_patches import import_hooks, original, replace

PATCH = "remote_code"
VARIABLE = "TFT_TRUST_REMOTE_CODE"
_DEFINED_IN = "transformers.dynamic_module_utils"
# Every transformers module that imports `resolve_trust_remote_code` by name (transformers 5.25).
_IMPORTED_BY = (
    "transformers.models.auto.configuration_auto",
    "transformers.models.auto.tokenization_auto",
    "transformers.models.auto.auto_factory",
    "transformers.models.auto.feature_extraction_auto",
    "transformers.models.auto.image_processing_auto",
    "transformers.models.auto.processing_auto",
    "transformers.models.auto.video_processing_auto",
    "transformers.exporters.base",
)


def trusted_names() -> List[str]:
    """The models named in `TFT_TRUST_REMOTE_CODE`, in order."""
    return [name.strip() for name in os.environ.get(VARIABLE, "").split(",") if name.strip()]


def trusts(model_name: str) -> bool:
    """
    Whether the user named `model_name` in `TFT_TRUST_REMOTE_CODE`: the same string, or, for a
    folder, the same folder by another path.
    """
    model_name = str(model_name)
    names = trusted_names()
    if model_name in names:
        return True
    if not os.path.isdir(model_name):
        return False
    folder = os.path.realpath(model_name)
    return any(os.path.isdir(name) and os.path.realpath(name) == folder for name in names)


def resolve_trust_remote_code(
    trust_remote_code: Any,
    model_name: Any,
    has_local_code: bool,
    has_remote_code: bool,
    *args: Any,
    **kwargs: Any,
) -> Any:
    """transformers' resolution, with an unset `trust_remote_code` answered by `trusts`."""
    if trust_remote_code is None and has_remote_code:
        trust_remote_code = trusts(model_name)
    resolve = original(sys.modules[_DEFINED_IN], "resolve_trust_remote_code")
    return resolve(trust_remote_code, model_name, has_local_code, has_remote_code, *args, **kwargs)


def _answer_in(module: types.ModuleType) -> None:
    if "resolve_trust_remote_code" in vars(module):
        replace(module, "resolve_trust_remote_code", resolve_trust_remote_code, patch=PATCH)


def install() -> None:
    """Puts the answer in place in each transformers module as it is imported (at once if it is)."""
    import_hooks.after_import(_DEFINED_IN, _answer_in)
    for name in _IMPORTED_BY:
        import_hooks.after_import(name, _answer_in)
