"""
Makes the `allennlp` command import what a command needs when it needs it. AllenNLP 2.10.1 (its
last release) imports, before any command runs, about 4 seconds of modules that the plugin's
commands, `train`, `evaluate` and `predict` never use, in two ways:

- **Modules its own modules import unconditionally** for one rarely used part: scikit-learn
  and `scipy.stats` (AllenNLP's AUC and Spearman metrics), NLTK (the EVALB metric's `Tree`),
  spaCy (its tokenizer and `TextField`'s `isinstance` check), boto3 (cached-path's S3 client).
  (torchvision, which `allennlp.data.image_loader` imports, is not deferred: transformers 5's
  model code imports it, through its image utilities, in every command.) `DEFERRED` names them;
  importing one gives a module whose body runs at the first attribute looked up on it (Python's
  PEP 562 module `__getattr__`), so `scipy.stats.spearmanr(...)` imports SciPy's statistics when a
  Spearman metric first computes. Bodies run in the order an eager import runs them: a package's
  before its submodules', and importing a submodule of a deferred package runs the package first
  (except where `submodules_first` says it need not: `from nltk import Tree` imports `nltk.tree`
  alone, the same object). The four spaCy names AllenNLP's modules import at import time and use
  only later (`Token`, `Doc`, `Language`, `download`) are stand-ins until spaCy runs: a call
  imports spaCy and calls the real one, `isinstance(x, Token)` is false while spaCy's token module
  has not run (nothing can be an instance of it) and the real check after; once spaCy runs,
  AllenNLP's modules bind its real objects. This is safe because these packages do nothing at
  import that a user relies on without looking an attribute up on them; any attribute, `dir()` or
  `from ... import *` runs the body, and an error in it is raised as an `ImportError` at that
  point.
- **Every registered component at start-up**: AllenNLP's `import_plugins` imports all of
  `allennlp` and all of allennlp-models, so that any registered name resolves from a config.
  `import_plugins` here imports the plugins (the plugin, `tft_allennlp.plugins` entry points,
  `.allennlp_plugins` files) and leaves those two to the first registry lookup that misses: a
  name not registered yet, a listing of the names, a base class with none registered. The
  lookup then imports them (AllenNLP's own `import_plugins`) and answers as if they had always
  been there, so a config naming an allennlp-models model or an AllenNLP component outside the
  command's imports still works, and an unknown name's error lists every name. Subcommands are
  exempt: all of AllenNLP's are imported with `allennlp.commands`, and allennlp-models
  registers none.

It applies only to processes that import `allennlp`, from the first `import allennlp` on (the
`tft_allennlp.pth` start-up hook installs it through `tft_allennlp_autoload`), and only to the
registry of the `allennlp` command (`tft_allennlp_autoload` hands it `import_plugins`).
`TFT_LAZY_IMPORTS=0` turns both off. `benchmarks/startup_benchmark.py` measures what it saves.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import logging
import os
import sys
import threading
import types
from collections import defaultdict
from typing import Any, Callable, Dict, List, Optional, Sequence

SWITCH = "TFT_LAZY_IMPORTS"

# The deferred modules. A package's submodules import after its body (as without deferral)
# unless `submodules_first`; `defined_in` maps a name imported with `from module import name`
# to the submodule that defines it (imported alone); `stand_ins` maps a name that AllenNLP's
# modules import at import time but use only in calls or `isinstance` to where it is defined.
DEFERRED: Dict[str, Dict[str, Any]] = {
    "scipy.stats": {},
    "sklearn": {},
    "sklearn.metrics": {},
    "nltk": {"submodules_first": True, "defined_in": {"Tree": "nltk.tree"}},
    "boto3": {},
    "boto3.session": {},
    "boto3.dynamodb": {},
    "botocore.client": {},
    "botocore.exceptions": {},
    "spacy": {},
    "spacy.cli": {},
    "spacy.cli.download": {"stand_ins": {"download": "spacy.cli.download"}},
    "spacy.language": {"stand_ins": {"Language": "spacy.language"}},
    "spacy.tokens": {"stand_ins": {"Token": "spacy.tokens.token", "Doc": "spacy.tokens.doc"}},
}
STAND_IN_IMPORTERS = "allennlp."  # the modules that get stand-ins: AllenNLP's own

# Default plugins of AllenNLP whose import waits for a registry lookup that misses.
DEFERRED_PLUGINS = ("allennlp_models",)

logger = logging.getLogger(__name__)


def enabled() -> bool:
    return os.environ.get(SWITCH, "1").strip().lower() not in ("0", "false", "no")


# ---- deferred module bodies ----------------------------------------------------------------


class _Body:
    """A deferred module's body, run once by the first attribute looked up on the module."""

    def __init__(self, module: types.ModuleType, loader: Any, deferral: Dict[str, Any]) -> None:
        self.module = module
        self.loader = loader
        self.deferral = deferral
        self.state = "deferred"

    def run(self) -> None:
        with _bodies:
            if self.state != "deferred":
                return
            # As without deferral, a package's body runs before its submodules' bodies (and may
            # run this one, by importing it).
            _run_deferred_parent(self.module.__name__)
            if self.state != "deferred":
                return
            self.state = "running"
            module = self.module
            for hook in ("__getattr__", "__dir__"):
                module.__dict__.pop(hook, None)
            module.__loader__ = self.loader
            if module.__spec__ is not None:
                module.__spec__.loader = self.loader
            try:
                self.loader.exec_module(module)
            except AttributeError as error:
                # Raised from `__getattr__`, it would read as "no such attribute".
                raise ImportError(f"importing {module.__name__}: {error}") from error
            finally:
                self.state = "done"
            _replace_stand_ins(module)

    def getattr(self, name: str) -> Any:
        module = self.module
        if name == "__path__":  # what the import system asks of a module that is no package
            raise AttributeError(f"module {module.__name__!r} has no attribute '__path__'")
        if self.state == "deferred" and not name.startswith("__"):
            defining = self.deferral.get("stand_ins", {}).get(name)
            if defining is not None and _importer().startswith(STAND_IN_IMPORTERS):
                return _stand_in(module.__name__, name, defining)
            defined_in = self.deferral.get("defined_in", {}).get(name)
            if defined_in is not None:
                return getattr(importlib.import_module(defined_in), name)
            submodule = f"{module.__name__}.{name}"
            if (
                submodule in sys.modules
                or submodule in DEFERRED
                or (
                    self.deferral.get("submodules_first")
                    and importlib.util.find_spec(submodule) is not None
                )
            ):
                return importlib.import_module(submodule)
        if self.state == "deferred":
            self.run()
            return getattr(module, name)
        raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")

    def dir(self) -> List[str]:
        self.run()
        return sorted(self.module.__dict__)


_bodies = threading.RLock()  # one for all: a body runs its package's, which may run others


_IMPORT_SYSTEM = ("importlib", "_frozen_importlib")


def _importer() -> str:
    """The module whose code is importing (or looking up) a name, past the import system."""
    frame: Optional[types.FrameType] = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(_IMPORT_SYSTEM):
        frame = frame.f_back
    return "" if frame is None else frame.f_globals.get("__name__", "")


def _body(module: Optional[types.ModuleType]) -> Optional[_Body]:
    hook = None if module is None else module.__dict__.get("__getattr__")
    body = getattr(hook, "__self__", None)
    return body if isinstance(body, _Body) else None


def is_deferred(module: types.ModuleType) -> bool:
    """Whether `module`'s body has not run yet."""
    body = _body(module)
    return body is not None and body.state == "deferred"


def _run_deferred_parent(name: str) -> None:
    """Runs the body of `name`'s package, if that is deferred (its own package's first)."""
    parent = name.rpartition(".")[0]
    body = _body(sys.modules.get(parent)) if parent else None
    if body is not None and body.state == "deferred" and not body.deferral.get("submodules_first"):
        body.run()


class _DeferringLoader(importlib.abc.Loader):
    def __init__(self, loader: Any, deferral: Dict[str, Any]) -> None:
        self._loader = loader
        self._deferral = deferral

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Optional[types.ModuleType]:
        return self._loader.create_module(spec)

    def __getattr__(self, name: str) -> Any:  # get_source, get_resource_reader, ...: the real
        return getattr(self._loader, name)

    def exec_module(self, module: types.ModuleType) -> None:
        body = _Body(module, self._loader, self._deferral)
        module.__dict__["__getattr__"] = body.getattr
        module.__dict__["__dir__"] = body.dir


class _Imported(importlib.abc.Loader):
    """
    Gives the module that a deferred package's body has just imported, unchanged. The import
    system, finding the module imported while it looked for it, loads the module's own spec
    again (a second copy of the module): for the length of that load, that spec is this one.
    """

    def __init__(self, module: types.ModuleType) -> None:
        self._module = module
        self._spec = module.__spec__
        self.spec = importlib.machinery.ModuleSpec(module.__name__, self)
        module.__spec__ = self.spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return self._module

    def exec_module(self, module: types.ModuleType) -> None:
        module.__spec__ = self._spec


class _Finder(importlib.abc.MetaPathFinder):
    """Defers the modules in `DEFERRED` once `allennlp` is imported."""

    def __init__(self) -> None:
        self.active = False
        self._busy: set = set()

    def find_spec(
        self, name: str, path: Optional[Sequence[str]], target: Any = None
    ) -> Optional[importlib.machinery.ModuleSpec]:
        if name == "allennlp":
            self.active = True
            return None
        if not self.active or name in self._busy:
            return None
        if name not in DEFERRED:
            # A submodule of a deferred package: the package's body first, as without deferral;
            # when that body imports the submodule, the import gives that module.
            _run_deferred_parent(name)
            module = sys.modules.get(name)
            if module is None or module.__spec__ is None:
                return None
            return _Imported(module).spec
        self._busy.add(name)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self._busy.discard(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _DeferringLoader(spec.loader, DEFERRED[name])
        return spec


def install() -> None:
    """Adds the deferring import hook (once); `tft_allennlp_autoload` calls it at start-up."""
    if enabled() and not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


# ---- stand-ins -------------------------------------------------------------------------------

_stand_ins: Dict[tuple, Any] = {}


def _stand_in(module_name: str, name: str, defining: str) -> Any:
    """
    What AllenNLP's `from module_name import name` binds while `module_name` is deferred: a
    class that answers `isinstance` and `issubclass` without importing (nothing can be an
    instance of a class whose module has not run) and imports the real one when called or
    looked into; or a function that imports the real one when called.
    """
    key = (module_name, name)
    if key in _stand_ins:
        return _stand_ins[key]

    def real() -> Any:
        root = _body(importlib.import_module(module_name.partition(".")[0]))
        if root is not None:
            root.run()  # the package's body first, as without deferral
        return getattr(importlib.import_module(module_name), name)

    def loaded() -> Any:
        module = sys.modules.get(defining)
        if module is None or is_deferred(module):
            return None
        return getattr(module, name, None)

    if name[:1].isupper():
        methods = {"_real": staticmethod(real), "_loaded": staticmethod(loaded)}
        stand_in: Any = _StandInClass(name, (), methods)
        stand_in.__module__ = module_name
    else:

        def stand_in(*args: Any, **kwargs: Any) -> Any:
            return real()(*args, **kwargs)

        stand_in.__name__ = stand_in.__qualname__ = name
        stand_in.__module__ = module_name
    _stand_ins[key] = stand_in
    return stand_in


def _replace_stand_ins(module: types.ModuleType) -> None:
    """Once `module` has run, AllenNLP's modules bind its real objects instead of stand-ins."""
    replaced = {
        id(stand_in): getattr(module, name)
        for (module_name, name), stand_in in _stand_ins.items()
        if module_name == module.__name__ and hasattr(module, name)
    }
    if not replaced:
        return
    for importer in list(sys.modules.values()):
        if getattr(importer, "__name__", "").startswith(STAND_IN_IMPORTERS):
            for key, value in list(vars(importer).items()):
                if id(value) in replaced:
                    setattr(importer, key, replaced[id(value)])


class _StandInClass(type):
    """The type of a class stand-in (see `_stand_in`)."""

    def __instancecheck__(cls, instance: Any) -> bool:
        real = cls._loaded()
        return real is not None and isinstance(instance, real)

    def __subclasscheck__(cls, subclass: type) -> bool:
        real = cls._loaded()
        return real is not None and issubclass(subclass, real)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls._real()(*args, **kwargs)

    def __getattr__(cls, attribute: str) -> Any:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return getattr(cls._real(), attribute)


# ---- registrations on demand ---------------------------------------------------------------

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

    Registrable.resolve_class_name = classmethod(resolve)  # type: ignore[assignment]
    Registrable.list_available = classmethod(available)  # type: ignore[assignment]
    Registrable._registry = _Registry(Registrable._registry)


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
