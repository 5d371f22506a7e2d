"""
Registrations on demand: the `allennlp` command's `import_plugins` imports the plugins and leaves
AllenNLP's and allennlp-models' registered components to the first registry lookup that misses
(the package's docstring says which lookups).
"""

import importlib
import logging
import os
import sys
import threading
from collections import defaultdict
from typing import Any, Callable, Dict, List, Optional

from tft_host_patches import replace

# The name of its patches of AllenNLP's registry (`tft_host_patches.replaced()`).
PATCH = "tft_allennlp_lazy"
# Default plugins of AllenNLP whose import waits for a registry lookup that misses.
DEFERRED_PLUGINS = ("allennlp_models",)

logger = logging.getLogger(__name__)

_lock = threading.RLock()
# AllenNLP's `import_plugins` (quiet), while the registry waits for it; None once it has run.
_complete: Optional[Callable[[], None]] = None


def complete_registry(why: str = "") -> bool:
    """
    Imports what `import_plugins` left to registry lookups, if it has not run yet; whether it
    ran now.
    """
    global _complete
    with _lock:
        complete, _complete = _complete, None
        if complete is None:
            return False
        logger.debug("importing every registered component%s", f" ({why})" if why else "")
        complete()
        return True


def import_plugins_on_demand(complete: Callable[[], None]) -> Callable[[], None]:
    """
    An `import_plugins` that imports the plugins and leaves AllenNLP's `complete` (its own
    `import_plugins`) to the first registry lookup that misses.
    """

    def import_plugins() -> None:
        global _complete
        with _lock:
            if _complete is None and _hooks_installed:
                complete()  # the registry is whole: AllenNLP's own, which imports nothing new
                return
            _complete = complete
        _import_plugins_only()
        _install_registry_hooks()

    return import_plugins


def _import_plugins_only() -> None:
    """What AllenNLP's `import_plugins` does, but for `allennlp` and `DEFERRED_PLUGINS`."""
    from allennlp.common import plugins
    from allennlp.common.util import import_module_and_submodules

    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.append(cwd)
    for name in plugins.DEFAULT_PLUGINS:
        if name in DEFERRED_PLUGINS:
            continue
        try:
            import_module_and_submodules(name)
            plugins.logger.info("Plugin %s available", name)
        except ModuleNotFoundError as error:
            if error.name != name:
                plugins.logger.error(f"Plugin {name} could not be loaded: {error}")
    for name in plugins.discover_plugins():
        try:
            importlib.import_module(name)
            plugins.logger.info("Plugin %s available", name)
        except ModuleNotFoundError as error:
            plugins.logger.error(f"Plugin {name} could not be loaded: {error}")


_hooks_installed = False


def _install_registry_hooks() -> None:
    """Makes `Registrable`'s lookups complete the registry when they miss (once)."""
    global _hooks_installed
    if _hooks_installed:
        return
    _hooks_installed = True
    from allennlp.commands.subcommand import Subcommand
    from allennlp.common.registrable import Registrable

    resolve_class_name = Registrable.resolve_class_name.__func__  # type: ignore[attr-defined]
    list_available = Registrable.list_available.__func__  # type: ignore[attr-defined]

    def resolve(cls: type, name: str) -> Any:
        if name not in Registrable._registry[cls]:
            complete_registry(f"{name!r} is not a registered {cls.__name__} yet")
        return resolve_class_name(cls, name)

    def available(cls: type) -> List[str]:
        default = cls.default_implementation  # type: ignore[attr-defined]
        if default is not None and default not in Registrable._registry[cls]:
            complete_registry(f"the default {cls.__name__}, {default!r}, is not registered yet")
        names = list_available(cls)
        if _complete is None or issubclass(cls, Subcommand):
            return names
        return _Names(lambda: list_available(cls), names)

    replace(Registrable, "resolve_class_name", classmethod(resolve), patch=PATCH)
    replace(Registrable, "list_available", classmethod(available), patch=PATCH)
    replace(Registrable, "_registry", _Registry(Registrable._registry), patch=PATCH)


class _Names(list):
    """
    The names registered for a class so far: a name not among them, or any use but the first
    name (the default) and membership, imports every registered component first.
    """

    def __init__(self, list_all: Callable[[], List[str]], names: List[str]) -> None:
        super().__init__(names)
        self._list_all = list_all

    def _whole(self) -> "_Names":
        if complete_registry("a listing of registered names"):
            list.__setitem__(self, slice(None), self._list_all())
        return self

    def __contains__(self, name: object) -> bool:
        return list.__contains__(self, name) or list.__contains__(self._whole(), name)

    def __getitem__(self, index: Any) -> Any:
        return list.__getitem__(self if index == 0 else self._whole(), index)


def _whole_first(method: str) -> Callable[..., Any]:
    original = getattr(list, method)

    def method_of_whole(self: _Names, *args: Any, **kwargs: Any) -> Any:
        return original(self._whole(), *args, **kwargs)

    method_of_whole.__name__ = method
    return method_of_whole


def _reduce(self: _Names, protocol: Any) -> Any:
    return list, (list(self._whole()),)  # pickled and deep-copied as the plain list


_Names.__reduce_ex__ = _reduce  # type: ignore[method-assign,assignment]

for _method in (
    "__iter__", "__len__", "__repr__", "__reversed__", "__eq__", "__ne__", "__add__",
    "__mul__", "__rmul__", "copy", "count", "index",
):  # fmt: skip
    setattr(_Names, _method, _whole_first(_method))


class _Registry(defaultdict):
    """
    AllenNLP's registry; a base class looked up with none registered completes it first (as
    `from_params` does). Code that reads the whole registry calls `complete_registry` first.
    """

    def __init__(self, registry: Dict[type, Any]) -> None:
        super().__init__(dict, registry)

    def _missing_base(self, cls: object) -> bool:
        from allennlp.common.from_params import is_base_registrable

        return (
            _complete is not None
            and not dict.__contains__(self, cls)
            and isinstance(cls, type)
            and is_base_registrable(cls)
        )

    def __contains__(self, cls: object) -> bool:
        if self._missing_base(cls):
            complete_registry(f"no {getattr(cls, '__name__', cls)} registered yet")
        return dict.__contains__(self, cls)

    def get(self, cls: Any, default: Any = None) -> Any:
        if self._missing_base(cls):
            complete_registry(f"no {getattr(cls, '__name__', cls)} registered yet")
        return dict.get(self, cls, default)
