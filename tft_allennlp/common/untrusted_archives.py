"""
Model archives opened as untrusted input: a `model.tar.gz` is made to be shared, so whoever made
it is not always whoever loads it.

AllenNLP's `load_archive` (which `allennlp predict`, `allennlp evaluate`, a `from_archive` model
and the plugin's own commands use) extracts the archive with `tarfile.extractall` and no filter,
evaluates its `config.json` as jsonnet, builds whatever classes the config names (a dotted name
such as `"type": "os.system"` is imported and called), and loads its weights with `torch.load`
into whatever model the config builds. An archive could therefore write any file the user can
write, fill the disk, read any file or environment variable into the config, hang the command in
jsonnet, run any code, or predict from weights that are NaN or silently cast. Four guards close
that, each before anything of the archive is built:

- **Members** (`tft_allennlp.common.archive_extraction`): only what loading reads is extracted,
  each member checked (no path out of the folder, no device) and counted against a budget of
  size and compression ratio before it is written.
- **Config** (`read_archive_config`): `config.json` is read as data, never as a program: strict
  JSON (no jsonnet, no NaN, no repeated key), at most `CONFIG_MAX_BYTES` long and
  `JSON_MAX_DEPTH` deep, one object; every `"type"` must be a registered name (registered
  components come from installed packages, which the user chose; a dotted import path could be
  any callable), and no `trust_remote_code` may be true (transformers would run a model
  repository's own code). `meta.json` is read the same way (`ArchiveMeta`).
- **Weights as data** (`load_weights`): `torch.load(..., weights_only=True)`, explicitly, so
  that no environment variable (`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`) turns the unpickler back
  into one that runs code; the file must hold a mapping of names to tensors, every floating
  value finite.
- **Weights that fit** (`check_state`): every tensor of the file is one of the model's, of its
  shape and its kind of dtype (floating, integer, bool: an int8 tensor is not cast into a float
  parameter), and the model's tensors are all there.

Each refusal is an `UntrustedArchiveError` (a `ConfigurationError`) whose one-line message names
the archive and the member, key or tensor; the `allennlp` command line prints it as that one
line (`tft_allennlp.common.console`). `install` puts the guards into AllenNLP's loading path
(`allennlp.models.archival.extracted_archive`, `archival.Params`, `archival.Meta`,
`archival._load_model` and `allennlp.nn.util.read_state_dict`, which `load_archive` looks up
through their modules at call time, and `Model.load_state_dict`, checked only while an archive's
model loads; written for AllenNLP 2.10.1, its last release). What the plugin trusts and what it
does not is in docs/security.md.
"""

import collections
import json
import logging
import os
import pickle
import re
import warnings
import zipfile
from collections import OrderedDict
from typing import Any, Callable, Dict, Iterator, List, Mapping, NamedTuple, Optional, Tuple, Union

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.common.meta import Meta
from allennlp.common.params import Params, parse_overrides, with_overrides
from allennlp.common.registrable import Registrable
from torch.utils._device import DeviceContext

from tft_allennlp.common.archive_extraction import (
    ARCHIVED_TRANSFORMERS,
    UntrustedArchiveError,
    archive_name,
    archive_of,
)

logger = logging.getLogger(__name__)

CONFIG_MAX_BYTES = 4 * 2**20
"""The longest `config.json` an archive may hold (AllenNLP writes a few KB)."""
JSON_MAX_DEPTH = 64
"""The deepest nesting of an archive's JSON (a training config nests about 10 deep)."""


def read_json_member(path: str, max_bytes: int = CONFIG_MAX_BYTES) -> Any:
    """
    The JSON value in the archive's file `path`, read as data: plain JSON (no NaN or Infinity,
    no key twice in an object) in UTF-8, at most `max_bytes` long and `JSON_MAX_DEPTH` deep; an
    `UntrustedArchiveError` naming the archive and the member otherwise.
    """
    where = archive_name(path)
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        raise ConfigurationError(f"{where}: missing; not a model archive") from None
    except OSError as error:  # a link in a loop, ...
        raise UntrustedArchiveError(
            f"{where}: refused: cannot be read ({error.strerror})"
        ) from None
    if size > max_bytes:
        raise UntrustedArchiveError(
            f"{where}: refused: {size} bytes, more than the {max_bytes} an archive's JSON file "
            "may have"
        )
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as error:  # a folder, a link in a loop, ...
        raise UntrustedArchiveError(
            f"{where}: refused: cannot be read ({error.strerror})"
        ) from None
    try:
        value = json.loads(
            data.decode("utf-8"),
            parse_constant=_no_constant,
            parse_float=_finite,
            object_pairs_hook=_unique_keys,
        )
    except RecursionError:
        value = _TOO_DEEP
    except (ValueError, UnicodeDecodeError) as error:
        raise UntrustedArchiveError(
            f"{where}: refused: not plain JSON ({str(error)[:160]}); an archive's files are read "
            "as data, not as jsonnet, which could read other files and environment variables"
        ) from None
    if value is _TOO_DEEP or _deeper_than(value, JSON_MAX_DEPTH):
        raise UntrustedArchiveError(
            f"{where}: refused: nested more than {JSON_MAX_DEPTH} deep, which no archive's JSON is"
        )
    return value


_TOO_DEEP = object()


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text[:40]} is too large a number")
    return value


def _unique_keys(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        counts = collections.Counter(key for key, _ in pairs)
        repeated = next(key for key, count in counts.items() if count > 1)
        raise ValueError(f"the key {repeated!r} twice in one object")
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether `value` nests lists and objects more than `limit` deep (without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def read_archive_config(path: str) -> Dict[str, Any]:
    """
    The archive's `config.json` at `path`, read as data (`read_json_member`), once sure that
    building it runs nothing but registered components and no model repository's code; an
    `UntrustedArchiveError` naming the archive and the key otherwise.
    """
    where = archive_name(path)
    config = read_json_member(path)
    if not isinstance(config, dict):
        raise UntrustedArchiveError(
            f"{where}: refused: a JSON {type(config).__name__}, not the object of a training config"
        )
    registered = _registered_names()
    for key_path, key, value in _items(config):
        if key == "type" and isinstance(value, str) and not _registered(value, registered):
            raise UntrustedArchiveError(
                f"{where}: refused: {key_path} {value!r} is not a registered component; an "
                "archive may only name registered ones (a dotted name would import and call "
                "any Python code). If you trust it, install the package that registers it"
            )
        if key == "trust_remote_code" and value:
            raise UntrustedArchiveError(
                f"{where}: refused: {key_path} is true; an archive may not make transformers "
                "run a model repository's own code"
            )
    return config


class ArchiveParams(Params):
    """
    AllenNLP's `Params` for `load_archive`: `from_file` reads the archive's config as data
    (`read_archive_config`), never as a jsonnet program, then applies the caller's overrides
    (the command line's `-o`, which the user wrote) as `Params.from_file` does.
    """

    @classmethod
    def from_file(
        cls,
        params_file: Union[str, "os.PathLike[str]"],
        params_overrides: Union[str, Dict[str, Any]] = "",
        ext_vars: Optional[dict] = None,
    ) -> "Params":
        config = read_archive_config(os.fspath(params_file))
        if isinstance(params_overrides, dict):
            params_overrides = json.dumps(params_overrides)
        overrides = parse_overrides(params_overrides, ext_vars=ext_vars)
        return Params(with_overrides(config, overrides) if overrides else config)


class ArchiveMeta(Meta):
    """AllenNLP's `Meta` for `load_archive`: `meta.json` read as data, one string `version`."""

    @classmethod
    def from_path(cls, path: Union[str, "os.PathLike[str]"]) -> "Meta":
        data = read_json_member(os.fspath(path), max_bytes=2**16)
        if not (
            isinstance(data, dict) and set(data) == {"version"} and isinstance(data["version"], str)
        ):
            raise UntrustedArchiveError(
                f"{archive_name(os.fspath(path))}: refused: not AllenNLP's meta.json (an object "
                'with one key, "version")'
            )
        return Meta(version=data["version"])


def _registered_names() -> set:
    """Every name registered so far, for any base class."""
    return {name for names in Registrable._registry.values() for name in names}


def _registered(name: str, registered: set) -> bool:
    """
    Whether `name` is in `registered` (names registered so far), after completing the registry
    if it is not (which then joins `registered`): the `allennlp` command leaves AllenNLP's and
    allennlp-models' components to the first registry lookup that misses (`tft_allennlp_lazy`),
    and a listing of registered names is such a lookup; elsewhere the listing is all there is.
    Never a lookup by `name`, which imports a dotted name's module.
    """
    if name not in registered:
        from allennlp.models import Model

        list(Model.list_available())
        registered |= _registered_names()
    return name in registered


def _items(value: Any, path: str = "") -> Iterator[tuple]:
    """(dotted key path, key, value) of every key of every object in a JSON value."""
    if isinstance(value, dict):
        for key, item in value.items():
            key_path = f"{path}.{key}" if path else str(key)
            yield key_path, key, item
            yield from _items(item, key_path)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _items(item, f"{path}[{index}]")


def load_weights(
    path: str, map_location: Any = "cpu", mmap: bool = False
) -> Dict[str, torch.Tensor]:
    """
    `torch.load(path, weights_only=True)`, checked to be a mapping of names to tensors whose
    floating values are all finite. A file that holds other objects (a pickle that would run
    code when loaded), is not a weights file at all, or holds NaN or infinite values is an
    `UntrustedArchiveError` or a `ConfigurationError` naming it (and its archive, and the tensor).
    """
    try:
        with warnings.catch_warnings():
            # torch's note on a pickle protocol other than its own: the refusal below says more.
            warnings.filterwarnings("ignore", message="Detected pickle protocol")
            # Mapped, the tensors are read as they are used (a file of torch's zip format only).
            mapped = mmap and zipfile.is_zipfile(path)
            state = torch.load(path, map_location=map_location, weights_only=True, mmap=mapped)
    except pickle.UnpicklingError as error:
        found = re.search(r"GLOBAL (\S+)|whose module (\S+) is blocked", str(error))
        if found is not None:
            raise UntrustedArchiveError(
                f"{archive_name(path)}: refused: it holds a Python object ("
                f"{found.group(1) or found.group(2)}) that loading would run, not only tensors; "
                "weights are loaded with torch.load(weights_only=True)"
            ) from None
        said = re.search(r"WeightsUnpickler error:\s*([^\n]+)", str(error))
        detail = (said.group(1) if said else str(error).strip().split("\n")[0])[:120]
        raise ConfigurationError(
            f"{archive_name(path)}: not a weights file torch can load with weights_only=True "
            f"({detail})"
        ) from None
    except IsADirectoryError:
        raise UntrustedArchiveError(
            f"{archive_name(path)}: refused: a folder, not weights"
        ) from None
    except FileNotFoundError:
        archive = archive_of(path)
        if archive is None:
            raise
        # AllenNLP looks for `best.th` when an archive has no `weights.th`.
        raise ConfigurationError(
            f"{archive[0]}: holds no weights.th; not a model archive"
        ) from None
    except (OSError, MemoryError):
        raise
    except Exception as error:
        # torch's readers fail on a file of another kind with any error (RuntimeError, EOFError,
        # KeyError from the unpickler's memo, ...): whatever it is, the file is not weights.
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0][:120]
        raise ConfigurationError(
            f"{archive_name(path)}: not a weights file torch can load ({reason})"
        ) from None
    check_tensors(state, archive_name(path))
    return state


def check_tensors(state: Any, source: str) -> None:
    """
    An `UntrustedArchiveError` naming `source` (the file, or `ARCHIVE (member)`) unless `state`
    maps names to tensors whose floating values are all finite.
    """
    if not isinstance(state, Mapping):
        raise UntrustedArchiveError(
            f"{source}: refused: holds a {type(state).__name__}, not a mapping of tensor names "
            "to tensors"
        )
    for name, tensor in state.items():
        if not isinstance(name, str) or not isinstance(tensor, torch.Tensor):
            raise UntrustedArchiveError(
                f"{source}: refused: entry {name!r} is a {type(tensor).__name__}, not a tensor"
            )
        if (tensor.is_floating_point() or tensor.is_complex()) and not bool(
            torch.isfinite(tensor).all()
        ):
            raise UntrustedArchiveError(
                f"{source}: refused: tensor {name!r} holds NaN or infinite values"
            )


def check_state(module: torch.nn.Module, state: Mapping[str, torch.Tensor], source: str) -> None:
    """
    An `UntrustedArchiveError` naming `source` and the tensor unless `state` fits `module`:
    every tensor one of the module's, of its shape and kind of dtype (floating, complex,
    integer or bool), and none of the module's missing but those its modules' class attribute
    `authorized_missing_keys` (AllenNLP's) allows.
    """
    own = module.state_dict()
    for name, tensor in state.items():
        expected = own.get(name)
        if expected is None:
            extra = [key for key in state if key not in own]
            more = f" (and {len(extra) - 1} more)" if len(extra) > 1 else ""
            raise UntrustedArchiveError(
                f"{source}: refused: tensor {name!r}{more} is none of the model's"
            )
        if tensor.shape != expected.shape:
            raise UntrustedArchiveError(
                f"{source}: refused: tensor {name!r} has shape {list(tensor.shape)}, the "
                f"model's {list(expected.shape)}"
            )
        if _dtype_kind(tensor.dtype) != _dtype_kind(expected.dtype):
            raise UntrustedArchiveError(
                f"{source}: refused: tensor {name!r} is {tensor.dtype}, the model's "
                f"{expected.dtype}; it would be cast"
            )
    missing = [key for key in own if key not in state and not _authorized_missing(module, key)]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise UntrustedArchiveError(
            f"{source}: refused: no tensor {missing[0]!r}{more}, which the model has"
        )


def _dtype_kind(dtype: torch.dtype) -> str:
    if dtype.is_floating_point:
        return "floating"
    if dtype.is_complex:
        return "complex"
    return "bool" if dtype == torch.bool else "integer"


def _authorized_missing(module: torch.nn.Module, key: str) -> bool:
    """Whether a module on `key`'s path lets `key` be missing (`authorized_missing_keys`, as
    AllenNLP's `Model._load` reads it: patterns relative to that module)."""
    parts = key.split(".")
    current: Optional[torch.nn.Module] = module
    for depth in range(len(parts)):
        if current is None:
            return False
        rest = ".".join(parts[depth:])
        for pattern in getattr(type(current), "authorized_missing_keys", None) or []:
            if re.search(pattern, rest) is not None:
                return True
        current = current._modules.get(parts[depth])
    return False


def read_state_dict(
    path: Union[os.PathLike, str],
    strip_prefix: Optional[str] = None,
    ignore: Optional[List[str]] = None,
    strict: bool = True,
    cuda_device: int = -1,
) -> Dict[str, torch.Tensor]:
    """
    AllenNLP's `nn.util.read_state_dict` (the same arguments and result), loading through
    `load_weights`, or taking what it loaded of `path` for the archive's model being built.
    """
    from allennlp.nn.util import device_mapping

    if ignore is not None and not isinstance(ignore, list):
        raise ValueError("'ignore' parameter should be a list")
    loading = _LOADING[-1] if _LOADING and _LOADING[-1].path == str(path) else None
    if loading is not None:
        state = loading.state  # on the CPU: `load_state_dict` copies it to the model's device
    else:
        state = load_weights(str(path), map_location=device_mapping(cuda_device))
    patterns = [re.compile(pattern) for pattern in ignore or []]
    ignore_used = [False] * len(patterns)
    strip_prefix_used = False
    out: Dict[str, torch.Tensor] = OrderedDict()
    for key, tensor in state.items():
        matched = [i for i, pattern in enumerate(patterns) if pattern.match(key)]
        if matched:
            ignore_used[matched[0]] = True
            logger.warning("ignoring %s from state dict", key)
            continue
        if strip_prefix and key.startswith(strip_prefix):
            strip_prefix_used = True
            key = key[len(strip_prefix) :]
            if not key:
                raise ValueError("'strip_prefix' resulted in an empty string for a key")
        out[key] = tensor
    if strict and strip_prefix is not None and not strip_prefix_used:
        raise ValueError(f"'strip_prefix' of '{strip_prefix}' was never used")
    for pattern, used in zip(ignore or [], ignore_used):
        if strict and not used:
            raise ValueError(f"'ignore' pattern '{pattern}' didn't have any matches")
    return out


def check_vocabulary(directory: str, oov_token: Optional[str] = None) -> None:
    """
    An `UntrustedArchiveError` naming the archive and the file unless AllenNLP's
    `Vocabulary.from_files` can read `directory` (which fails with a bare `AssertionError` or
    `UnicodeDecodeError`): every namespace file a regular UTF-8 file, and those of padded
    namespaces holding the OOV token (`oov_token`, default AllenNLP's `@@UNKNOWN@@`).
    """
    from allennlp.common.util import namespace_match
    from allennlp.data.vocabulary import DEFAULT_OOV_TOKEN, NAMESPACE_PADDING_FILE

    if not os.path.isdir(directory):
        raise UntrustedArchiveError(
            f"{archive_name(directory)}: missing, or not a folder; not a model archive"
        )
    texts: Dict[str, str] = {}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if name.startswith("."):
            continue  # AllenNLP reads no hidden file
        if not os.path.isfile(path):
            raise UntrustedArchiveError(f"{archive_name(path)}: refused: not a vocabulary file")
        try:
            with open(path, "rb") as handle:
                texts[name] = handle.read().decode("utf-8")
        except UnicodeDecodeError as error:
            raise UntrustedArchiveError(
                f"{archive_name(path)}: refused: not UTF-8 text ({error.reason} at byte "
                f"{error.start})"
            ) from None
    non_padded = re.split(r"\r?\n", texts.pop(NAMESPACE_PADDING_FILE, ""))
    oov_token = oov_token or DEFAULT_OOV_TOKEN
    for name, text in texts.items():
        namespace = name.replace(".txt", "")
        if any(namespace_match(pattern, namespace) for pattern in non_padded if pattern):
            continue
        if oov_token not in re.split(r"\r?\n", text):
            raise UntrustedArchiveError(
                f"{archive_name(os.path.join(directory, name))}: refused: the words of the padded "
                f"namespace {namespace!r} lack the unknown word {oov_token!r}, which AllenNLP needs"
            )


class _Loading(NamedTuple):
    """The weights of an archive's model while `archival._load_model` builds it: how messages
    name them, their file, and what `load_weights` read of it (which `read_state_dict` hands on
    rather than reading the file again)."""

    source: str
    path: str
    state: Dict[str, torch.Tensor]


_LOADING: List[_Loading] = []


def check_base_models(serialization_dir: str, values: int) -> None:
    """
    An `UntrustedArchiveError` naming the archive and the member unless the config of each copy
    of a base checkpoint in the archive (`pretrained_transformers/*/config.json`, which the
    model is built from before its weights are read) describes a model transformers builds,
    with no more than twice as many parameters as the weights hold `values`: a `vocab_size` of
    10**9 in a 100 KB archive would allocate 128 GB before any weight is checked. Counted on the
    meta device, so nothing is allocated.
    """
    from transformers import AutoConfig, AutoModel
    from transformers.initialization import no_init_weights

    folder = os.path.join(serialization_dir, ARCHIVED_TRANSFORMERS)
    if not os.path.isdir(folder):
        return  # nothing to build from
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name, "config.json")
        if not os.path.isfile(path):
            continue
        read_json_member(path)  # bounded before transformers reads it
        try:
            config = AutoConfig.from_pretrained(os.path.dirname(path), local_files_only=True)
            # No initialisation: on the meta device it would import torch's compiler (2 s).
            with _OnMeta(torch.device("meta")), no_init_weights():
                count = sum(p.numel() for p in AutoModel.from_config(config).parameters())
        except Exception as error:  # transformers' errors are of every kind
            reason = (str(error).strip().splitlines() or [type(error).__name__])[0][:160]
            raise UntrustedArchiveError(
                f"{archive_name(path)}: refused: not the config of a model transformers builds "
                f"({reason})"
            ) from None
        # Twice: the weights lack what the model drops (the pooler) and may hold resized
        # embeddings; a bomb is orders of magnitude over.
        if count > 2 * values:
            raise UntrustedArchiveError(
                f"{archive_name(path)}: refused: describes a model of {count:,} parameters, "
                f"more than twice the {values:,} values of its weights; building it would take "
                f"{4 * count / 2**30:,.1f} GiB"
            )


class _OnMeta(DeviceContext):
    """
    torch's context of a default device (`with torch.device("meta")`), but for `arange`, which
    builds the buffers of positions: on the meta device it goes through torch's Python
    decompositions, whose first use imports torch's symbolic shapes (0.5 s of every `predict`).
    """

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if func is torch.arange:
            return func(*args, **(kwargs or {}))
        return super().__torch_function__(func, types, args, kwargs)


def _built_from_archive(serialization_dir: str, build: Callable[[], Any]) -> Any:
    """
    `build()`, where any error but a one-line one (a `ConfigurationError`, an `OSError` naming
    its file) is an `UntrustedArchiveError` naming the archive's config: a value of the wrong
    type or range (a string as `dropout`) fails deep in a component, with no file named.
    """
    what: Exception
    try:
        return build()
    except ConfigurationError:
        raise
    except OSError as error:
        if error.filename is not None:
            raise
        what = error
    except Exception as error:
        what = error
    reason = (str(what).strip().splitlines() or [""])[0][:160]
    raise UntrustedArchiveError(
        f"{archive_name(os.path.join(serialization_dir, 'config.json'))}: refused: AllenNLP "
        f"cannot build what it describes ({type(what).__name__}: {reason})"
    ) from what


def checked_dataset_readers(load: Callable[..., Any]) -> Callable[..., Any]:
    """AllenNLP's `archival._load_dataset_readers`, its errors naming the archive's config."""

    def _load_dataset_readers(config: Any, serialization_dir: str) -> Any:
        return _built_from_archive(serialization_dir, lambda: load(config, serialization_dir))

    return _load_dataset_readers


def checked_load_model(load: Callable[..., Any]) -> Callable[..., Any]:
    """AllenNLP's `archival._load_model`, checking the vocabulary, the weights (read once, mapped)
    and the base models' configs first, and the weights against the model it builds."""

    def _load_model(
        config: Any, weights_path: str, serialization_dir: str, cuda_device: int
    ) -> Any:
        vocabulary = config.as_dict(quiet=True).get("vocabulary")
        oov_token = vocabulary.get("oov_token") if isinstance(vocabulary, dict) else None
        check_vocabulary(os.path.join(serialization_dir, "vocabulary"), oov_token)
        state = load_weights(weights_path, mmap=True)
        check_base_models(serialization_dir, sum(tensor.numel() for tensor in state.values()))
        _LOADING.append(_Loading(archive_name(weights_path), str(weights_path), state))
        try:
            return _built_from_archive(
                serialization_dir,
                lambda: load(config, weights_path, serialization_dir, cuda_device),
            )
        finally:
            _LOADING.pop()

    return _load_model


def checked_load_state_dict(load_state_dict: Callable[..., Any]) -> Callable[..., Any]:
    """`Model.load_state_dict`, through `check_state` while an archive's model loads."""

    def checked_load_state_dict(
        self: torch.nn.Module, state_dict: Any, *args: Any, **kwargs: Any
    ) -> Any:
        if _LOADING:
            check_state(self, state_dict, _LOADING[-1].source)
        return load_state_dict(self, state_dict, *args, **kwargs)

    return checked_load_state_dict
