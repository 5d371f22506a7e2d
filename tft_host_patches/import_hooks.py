"""
Runs a function just before or just after a named module's body runs, whenever (and if ever)
it is first imported, so that a patch of a host module costs nothing in a process that never
imports it. One meta-path finder serves every hook.
"""

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
import types
from typing import Any, Callable, Dict, List, Optional, Sequence

Hook = Callable[[types.ModuleType], None]

_before: Dict[str, List[Hook]] = {}
_after: Dict[str, List[Hook]] = {}
_lock = threading.RLock()


def before_import(name: str, hook: Hook) -> None:
    """
    Calls `hook(module)` just before module `name`'s body runs (the module object exists, empty);
    if `name` is already imported, at once.
    """
    with _lock:
        module = sys.modules.get(name)
        if module is not None:
            hook(module)
            return
        _before.setdefault(name, []).append(hook)
        _install_finder()


def after_import(name: str, hook: Hook) -> None:
    """Calls `hook(module)` once module `name`'s body has run; if already imported, at once."""
    with _lock:
        module = sys.modules.get(name)
        if module is not None:
            hook(module)
            return
        _after.setdefault(name, []).append(hook)
        _install_finder()


class _Loader(importlib.abc.Loader):
    def __init__(self, loader: importlib.abc.Loader, name: str) -> None:
        self._loader = loader
        self._name = name

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Optional[types.ModuleType]:
        return self._loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        with _lock:
            before = _before.pop(self._name, [])
            after = _after.pop(self._name, [])
        for hook in before:
            hook(module)
        self._loader.exec_module(module)
        # The module's body may have replaced itself in sys.modules (transformers does).
        module = sys.modules.get(self._name, module)
        for hook in after:
            hook(module)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds a hooked module as the other finders do, and wraps its loader."""

    def __init__(self) -> None:
        self._busy = threading.local()

    def find_spec(
        self, name: str, path: Optional[Sequence[str]], target: Any = None
    ) -> Optional[importlib.machinery.ModuleSpec]:
        if (name not in _before and name not in _after) or getattr(self._busy, "on", False):
            return None
        self._busy.on = True
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self._busy.on = False
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader, name)
        return spec


_finder: Optional[_Finder] = None


def _install_finder() -> None:
    global _finder
    if _finder is None:
        _finder = _Finder()
        sys.meta_path.insert(0, _finder)
