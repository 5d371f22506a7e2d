"""
Every change the plugin makes to its hosts, AllenNLP 2.10.1 (its last release, with
allennlp-models 2.10.1), the Hugging Face libraries and the interpreter, and the one helper they
replace things with. This package imports nothing heavy: the `tft_allennlp.pth` start-up hook
imports it in every process of the environment, before anything imports AllenNLP.

Every installer is here, one module per patch, the plugin's checks and behaviour they put in
place staying in `tft_allennlp` beside the code that uses them. Three kinds:

- **The stack's gaps** (`install_at_startup`, from the start-up hook and again from
  `import tft_allennlp`): AllenNLP 2.10.1 was written against transformers 4.x and
  huggingface-hub 0.x and does not import on today's stack without them. `huggingface_stack.py`
  holds each one with its paragraph (version, gap, how to remove), `tracking_stack.py` those of
  AllenNLP's W&B callback on today's wandb; `remote_code.py` answers
  transformers' question whether to run a checkpoint's own code (only for the models the user
  names in `TFT_TRUST_REMOTE_CODE`), which AllenNLP never answers.
- **The plugin's behaviour in AllenNLP's commands** (`plugin.py`: the index, with a paragraph per
  patch, and `install`, which `import tft_allennlp` calls): config defaults, run directories and
  their lock, atomic run files, stopping on a signal, the process group at exit, confidence
  checks, the quiet terminal, progress bars, `predict` and `evaluate`, untrusted archives. The
  start-up hook's own patches (`tft_allennlp_autoload.py`, beside the package) are in that index
  too.
- **Module state the plugin changes when it needs to** (`host_state.py`): AllenNLP's transformer
  cache emptied of the model an embedder just built, and torch's compiler falling back to eager
  code, each with its paragraph.

`replace` is how every patch puts its object in place: it keeps the original (`original`) and what
each patch's wrapper calls on to (`previous`), does nothing when the same patch is already there,
and says which patch replaced what (`replaced`), so that a maintainer finds every replaced name in
one list.
"""

from typing import Any, Dict, List, Tuple

# The attribute a replacement carries: the name of the patch that put it in place.
PATCH_ATTRIBUTE = "__tft_patch__"

# (owner's name, attribute) -> [(patch, what it replaced), ...], in the order they were replaced:
# several patches may wrap one function, each around the one before.
_replaced: Dict[Tuple[str, str], List[Tuple[str, Any]]] = {}
_MISSING = object()


def _owner_name(owner: Any) -> str:
    name = getattr(owner, "__qualname__", None) or getattr(owner, "__name__", None)
    module = getattr(owner, "__module__", None)
    if isinstance(owner, type) and module:
        return f"{module}.{name}"
    return str(name if name is not None else type(owner).__name__)


def replace(owner: Any, name: str, new: Any, *, patch: str) -> bool:
    """
    Puts `new` in place of `owner.name` (a module's or a class's attribute, which may be missing),
    once per patch: returns False, changing nothing, when the attribute is already a replacement
    by `patch`. The host's own stays reachable through `original(owner, name)`; a wrapper of
    what is there now (which may be another patch's) takes it from `owner.name` before replacing.

    # Parameters

    owner : `Any`
        The module or class whose attribute is replaced.
    name : `str`
        The attribute.
    new : `Any`
        The replacement; functions and classes are marked with the patch's name.
    patch : `str`
        The patch's name, as the index of this package gives it (its module's name).
    """
    current = owner.__dict__.get(name, _MISSING) if hasattr(owner, "__dict__") else _MISSING
    if current is not _MISSING and getattr(current, PATCH_ATTRIBUTE, None) == patch:
        return False
    try:
        setattr(new, PATCH_ATTRIBUTE, patch)
    except (AttributeError, TypeError):  # a builtin or a slotted object: not marked
        pass
    _replaced.setdefault((_owner_name(owner), name), []).append((patch, current))
    setattr(owner, name, new)
    return True


def original(owner: Any, name: str) -> Any:
    """What `owner.name` was before any patch replaced it (the attribute itself if none did)."""
    entries = _replaced.get((_owner_name(owner), name))
    if not entries or entries[0][1] is _MISSING:
        return getattr(owner, name)
    return entries[0][1]


def previous(owner: Any, name: str, patch: str) -> Any:
    """
    What `patch` replaced of `owner.name`: the object its wrapper calls on to, the host's own or
    the wrapper of a patch applied before it.
    """
    for entry_patch, replaced_object in _replaced.get((_owner_name(owner), name), []):
        if entry_patch == patch:
            if replaced_object is _MISSING:
                raise AttributeError(f"{patch} added {_owner_name(owner)}.{name}; it replaced none")
            return replaced_object
    raise LookupError(f"{patch} has not replaced {_owner_name(owner)}.{name}")


def replaced() -> List[Tuple[str, str]]:
    """Every `owner.attribute` replaced in this process, with the patch that replaced it."""
    return [
        (f"{owner}.{name}", patch)
        for (owner, name), entries in _replaced.items()
        for patch, _ in entries
    ]


_installed_at_startup = False


def install_at_startup() -> None:
    """Mends the stack's gaps (once per process); must run before AllenNLP is imported."""
    global _installed_at_startup
    if _installed_at_startup:
        return
    _installed_at_startup = True
    from tft_host_patches import huggingface_stack, remote_code, tracking_stack

    huggingface_stack.install()
    remote_code.install()
    tracking_stack.install()
