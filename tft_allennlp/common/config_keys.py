"""
Keys that nothing reads are errors, with the closest valid key suggested.

AllenNLP rejects most unknown keys of a config (or of its `-o` overrides), in words that vary
(`Extra parameters passed to X`, `X.__init__() got an unexpected keyword argument`) and never
with a suggestion; and some it ignores: `GradientDescentTrainer` takes `**kwargs`, so that
`-o '{"trainer.num_epoch": 1}'` trains the config's 4 epochs without a word. `check_config_keys`
walks a whole training config the way `from_params` will build it (each component's class from
its `type`, each key against the parameters of the constructor AllenNLP calls, through `Lazy`,
`Optional`, lists and dicts of components) and raises one `ConfigurationError` that names the
key and suggests the closest valid one. Where a class's parameters cannot be known (`**kwargs`
passed on to a class that is not built from a config), its keys are left to AllenNLP.

`unknown_key_error` words the same message for other key sets, and `dataclass_settings` reads
and checks the experiment spec's (keys and the types of their values).
"""

import dataclasses
import difflib
import inspect
import json
import typing
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Type, Union

from allennlp.common import FromParams, Lazy, Registrable
from allennlp.common.checks import ConfigurationError

# Top-level keys that AllenNLP's `train` pops before it builds `TrainModel`.
_TRAIN_EXTRA_KEYS = {
    "random_seed",
    "numpy_seed",
    "pytorch_seed",
    "evaluation",
    "include_in_archive",
    "distributed",
    "type",
}


# The `from_params` that builds a component from its constructor's parameters.
_FROM_PARAMS = FromParams.from_params.__func__  # type: ignore[attr-defined]


def closest(key: str, choices: Iterable[str]) -> Optional[str]:
    """The valid key nearest to `key` in spelling, if one is near enough."""
    matches = difflib.get_close_matches(key, sorted(choices), n=1, cutoff=0.6)
    return matches[0] if matches else None


def unknown_key_error(
    key: str, choices: Iterable[str], where: str, prefix: str = ""
) -> ConfigurationError:
    """`WHERE: unknown key 'PREFIX.KEY'; did you mean 'PREFIX.CLOSEST'?` (or the valid keys)."""
    choices = sorted(choices)
    suggestion = closest(key, choices)
    if suggestion is not None:
        hint = f"did you mean {prefix + suggestion!r}?"
    else:
        hint = f"valid keys there: {', '.join(choices)}"
    return ConfigurationError(f"{where}: unknown key {prefix + key!r}; {hint}")


def check_config_keys(config: Dict[str, Any], where: str = "config") -> None:
    """
    Raises a `ConfigurationError` for the first key of the training `config` (as `allennlp
    train` reads it, overrides applied) that no constructor takes.
    """
    from allennlp.commands.train import TrainModel

    _check(config, TrainModel, "", where, extra=_TRAIN_EXTRA_KEYS)


def _check(
    value: Any, base: Type, prefix: str, where: str, extra: Iterable[str] = ("type",)
) -> None:
    if not isinstance(value, dict):
        return
    built = _class_and_constructor(base, value)
    if built is None:
        return
    cls, constructor = built
    if getattr(getattr(cls, "from_params", None), "__func__", None) is not _FROM_PARAMS:
        return  # a class that reads its parameters its own way
    parameters = _parameters(cls, constructor)
    if parameters is None:
        return
    known = set(parameters) | set(extra)
    for key, item in value.items():
        if key not in known:
            raise unknown_key_error(key, known, where, prefix)
        if key in parameters:
            _check_argument(item, parameters[key].annotation, f"{prefix}{key}", where)


def _check_argument(value: Any, annotation: Any, path: str, where: str) -> None:
    kind = _component(annotation)
    if kind is None:
        return
    shape, component = kind
    if shape == "one":
        _check(value, component, path + ".", where)
    elif shape == "list" and isinstance(value, list):
        for index, item in enumerate(value):
            _check(item, component, f"{path}.{index}.", where)
    elif shape == "dict" and isinstance(value, dict):
        for name, item in value.items():
            _check(item, component, f"{path}.{name}.", where)


def _component(annotation: Any) -> Optional[Tuple[str, Type]]:
    """("one" | "list" | "dict", the component class) for an annotation naming components."""
    origin = getattr(annotation, "__origin__", None)
    arguments: List[Any] = [a for a in getattr(annotation, "__args__", ()) if a is not type(None)]
    if origin is Union:
        return _component(arguments[0]) if len(arguments) == 1 else None
    if origin is Lazy:
        return _component(arguments[0]) if arguments else None
    if origin is list and len(arguments) == 1:
        inner = _component(arguments[0])
        return ("list", inner[1]) if inner is not None and inner[0] == "one" else None
    if origin is dict and len(arguments) == 2:
        inner = _component(arguments[1])
        return ("dict", inner[1]) if inner is not None and inner[0] == "one" else None
    if isinstance(annotation, type) and issubclass(annotation, FromParams):
        return "one", annotation
    return None


def _class_and_constructor(base: Type, value: Dict[str, Any]) -> Optional[Tuple[Type, Callable]]:
    """The class that `from_params` builds for `value` as a `base`, and the method it calls."""
    if issubclass(base, Registrable) and base in Registrable._registry:
        name = value.get("type", base.default_implementation)
        if not isinstance(name, str):
            return None
        try:
            cls, constructor_name = base.resolve_class_name(name)
        except ConfigurationError:
            return None  # AllenNLP names the unknown type
    else:
        cls, constructor_name = base, None
    constructor = getattr(cls, constructor_name) if constructor_name else cls.__init__
    return cls, constructor


def _parameters(cls: Type, method: Callable) -> Optional[Dict[str, inspect.Parameter]]:
    """
    The parameters a config may give `method` of `cls`; with `**kwargs`, also those of the
    nearest `FromParams` superclass's constructor (where AllenNLP sends them). None where
    `**kwargs` reach no such class.
    """
    try:
        signature = inspect.signature(method)
    except (TypeError, ValueError):
        return None
    parameters = {
        name: parameter
        for name, parameter in signature.parameters.items()
        if name != "self"
        and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
    }
    if not any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values()):
        return parameters
    for parent in cls.mro()[1:]:
        if issubclass(parent, FromParams):
            if parent.__init__ is object.__init__:
                return parameters  # object() takes no keyword arguments either
            inherited = _parameters(parent, parent.__init__)
            return None if inherited is None else {**inherited, **parameters}
    return None


def dataclass_settings(
    path: str, cls: Type, ext_vars: Optional[Dict[str, str]] = None
) -> Dict[str, Any]:
    """
    The settings in the JSON or jsonnet file `path` for the dataclass `cls` (an experiment
    spec), checked: a JSON object, whose every key is a field of `cls` (an unknown one is an
    error suggesting the closest) and whose every value has the field's type (`List[int]`, ...;
    a wrong one is an error naming the field). Errors start with `path`. `ext_vars`: more
    variables for its `std.extVar`s, which win over the environment (`Params.from_file`).
    """
    from allennlp.common import Params

    try:
        settings = Params.from_file(path, ext_vars=ext_vars).as_dict(quiet=True)
    except (AttributeError, TypeError):  # `Params` of some JSON values that are not objects
        settings = None
    if not isinstance(settings, dict):
        raise ConfigurationError(f"{path}: expected a JSON object of settings")
    hints = typing.get_type_hints(cls)
    fields = {item.name for item in dataclasses.fields(cls)}
    for key, value in settings.items():
        if key not in fields:
            raise unknown_key_error(key, fields, path)
        if not _has_type(value, hints[key]):
            raise ConfigurationError(
                f"{path}: {key!r} must be {_describe(hints[key])}, not {json.dumps(value)[:60]}"
            )
    return settings


def _has_type(value: Any, hint: Any) -> bool:
    origin = getattr(hint, "__origin__", None)
    arguments: Tuple[Any, ...] = getattr(hint, "__args__", ())
    if hint is Any:
        return True
    if origin is Union:
        return any(_has_type(value, argument) for argument in arguments)
    if origin is list:
        return isinstance(value, list) and all(_has_type(item, arguments[0]) for item in value)
    if origin is dict:
        return isinstance(value, dict) and all(
            isinstance(key, str) and _has_type(item, arguments[1]) for key, item in value.items()
        )
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint) if isinstance(hint, type) else True


def _describe(hint: Any) -> str:
    origin = getattr(hint, "__origin__", None)
    arguments: Tuple[Any, ...] = getattr(hint, "__args__", ())
    if origin is Union:
        described = [_describe(a) for a in arguments if a is not type(None)]
        return " or ".join(described) + (" or null" if type(None) in arguments else "")
    if origin is list:
        return f"a list of {_describe(arguments[0])}"
    if origin is dict:
        return f"an object of {_describe(arguments[1])}"
    names = {str: "text", int: "an integer", float: "a number", bool: "true or false"}
    return names.get(hint, "anything" if hint is Any else getattr(hint, "__name__", str(hint)))
