"""
Deferred module bodies: `DEFERRED`'s modules import as modules whose body runs at the first
attribute looked up on them, and the names AllenNLP's modules import from spaCy at import time are
stand-ins until spaCy runs (the package's docstring says why and when this is safe).
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
import types
from collections.abc import Mapping
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

# The deferred modules. A package's submodules import after its body (as without deferral)
# unless `submodules_first`; `defined_in` maps a name imported with `from module import name`
# to the submodule that defines it (imported alone); `stand_ins` maps a name that AllenNLP's
# modules import at import time but use only in calls, `isinstance` or lookups of keys to where
# it is defined (a class, a function, or a table of constants named in capitals).
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
    # What transformers 5's model code imports for parts a BERT-type encoder never runs:
    # SciPy's assignment solver (object detection's loss) and torchvision (image utilities;
    # AllenNLP's image loader too). Its tensor parallelism (with sympy) and torch's compiler
    # stay: loading any model runs the first, and importing its generation code the second.
    "scipy.optimize": {"stand_ins": {"linear_sum_assignment": "scipy.optimize"}},
    "torchvision": {"submodules_first": True},
    # AllenNLP's transformer modules (imported by every command through `allennlp.models`) take
    # only BERT's table of activations from BERT's model code, whose import pulls transformers
    # 5's model loading (tensor parallelism, torch's compiler): ~4 s a command with no model.
    "transformers.models.bert.modeling_bert": {"stand_ins": {"ACT2FN": "transformers.activations"}},
    # transformers' Trainer utilities (which AllenNLP's optimizers import) import peft where it
    # is installed (the `lora` adapters), and peft imports transformers' model code at import.
    "peft": {"stand_ins": {"PeftModel": "peft.peft_model", "PeftMixedModel": "peft.mixed_model"}},
}
# The modules that get stand-ins: AllenNLP's own and transformers'.
STAND_IN_IMPORTERS = ("allennlp.", "transformers.")


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


def install_finder() -> None:
    """Adds the deferring import hook (once)."""
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


# ---- stand-ins -------------------------------------------------------------------------------

_stand_ins: Dict[tuple, Any] = {}


def _stand_in(module_name: str, name: str, defining: str) -> Any:
    """
    What AllenNLP's `from module_name import name` binds while `module_name` is deferred: a
    class that answers `isinstance` and `issubclass` without importing (nothing can be an
    instance of a class whose module has not run) and imports the real one when called or
    looked into; a function that imports the real one when called; or, for a constant (a name
    in capitals), a read-only mapping that imports the real one when read.
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

    if name.isupper():
        stand_in: Any = _StandInMapping(real)
    elif name[:1].isupper():
        methods = {"_real": staticmethod(real), "_loaded": staticmethod(loaded)}
        stand_in = _StandInClass(name, (), methods)
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


class _StandInMapping(Mapping):
    """A table's stand-in (see `_stand_in`): any read imports the real table and reads it."""

    def __init__(self, real: Callable[[], Any]) -> None:
        self._real = real

    def __getitem__(self, key: Any) -> Any:
        return self._real()[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._real())

    def __len__(self) -> int:
        return len(self._real())
