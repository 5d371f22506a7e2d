"""
A stand-in for a package that the GPU device check does not carry (benchmarks/gpu/absent.txt).

`run.sh` writes, for each such package the machine lacks, `<name>/__init__.py` calling
`stand_in(__name__)` into a folder on `PYTHONPATH`. The stand-in imports, as do its submodules
(`import spacy.cli.download`), and every attribute is a placeholder class, so AllenNLP's
import-time references (annotations, `except (botocore.exceptions.X, ...)`, base classes) work;
calling or instantiating one raises an `ImportError` naming the package. Nothing is computed
with it. Libraries that probe for optional packages through their metadata (transformers) see none.
"""

import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any, Dict, Optional, Sequence


def _message(name: str) -> str:
    return (
        f"{name} is a stand-in on this machine: benchmarks/gpu/run.sh does not carry "
        f"{name.split('.')[0]} (see benchmarks/gpu/absent.txt)"
    )


class _PlaceholderMeta(type):
    def __getattr__(cls, attribute: str) -> Any:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return _placeholder(f"{cls.__qualname__}.{attribute}", cls.__module__)


def _fail(self: Any, *args: Any, **kwargs: Any) -> None:
    # The placeholder itself, or the placeholder a class of the user's derives from.
    cls = next(c for c in type(self).__mro__ if "_stand_in" in vars(c))
    raise ImportError(_message(f"{cls.__module__}.{cls.__qualname__}"))


_PLACEHOLDERS: Dict[str, type] = {}


def _placeholder(qualname: str, module: str) -> type:
    key = f"{module}:{qualname}"
    if key not in _PLACEHOLDERS:
        # An exception class, so that `except (package.SomeError, ...)` works too.
        cls = _PlaceholderMeta(
            qualname.rsplit(".", 1)[-1], (Exception,), {"__init__": _fail, "_stand_in": True}
        )
        cls.__qualname__, cls.__module__ = qualname, module
        _PLACEHOLDERS[key] = cls
    return _PLACEHOLDERS[key]


class _StandInModule(types.ModuleType):
    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return _placeholder(attribute, self.__name__)


class _StandInLoader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _StandInModule(spec.name, _message(spec.name))
        module.__path__ = []  # a package: its submodules are stand-ins too
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


class _StandInFinder(importlib.abc.MetaPathFinder):
    def __init__(self) -> None:
        self.packages: set = set()

    def find_spec(
        self, fullname: str, path: Optional[Sequence[str]], target: Any = None
    ) -> Optional[importlib.machinery.ModuleSpec]:
        if "." in fullname and fullname.split(".")[0] in self.packages:
            return importlib.machinery.ModuleSpec(fullname, _StandInLoader(), is_package=True)
        return None


_FINDER = _StandInFinder()


def stand_in(name: str) -> None:
    """Turns the package `name`, being imported from its stand-in `__init__.py`, into a stand-in."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    _FINDER.packages.add(name)
    module = sys.modules[name]
    module.__class__ = _StandInModule
    module.__doc__ = _message(name)
