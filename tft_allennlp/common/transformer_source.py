"""
Where the plugin's components read a pretrained transformer from, so that a model archive is
self-contained and an injection archive can stand for the encoder it trained.

`model_name` in the plugin's configs (the `tft_pretrained_transformer` tokenizer, indexer,
embedder and backbone, and `tft_glue_head`) is a hub name, a local Hugging Face checkpoint
directory, or a model archive (`model.tar.gz`) of this plugin. `transformer_source` turns it into
what to read:

- **Training** (AllenNLP gives every component the serialization directory): the checkpoint's
  files except its weights (config, tokenizer, sentence-transformers modules) are copied to
  `SERIALIZATION_DIR/pretrained_transformers/<key>/`, which the configs' `include_in_archive`
  puts into `model.tar.gz`; the embedder adds the pooler it drops (`POOLER_FILE`), so that
  `tft-export` can write it back.
- **Loading an archive** (`load_archive` gives the extracted archive as serialization directory):
  every component reads that copy instead of `model_name`, and the embedder builds the
  transformer from the copied config without weights, which come from the archive's
  `weights.th`. The archive loads after the checkpoint is deleted, or on another machine.
- **A model archive as `model_name`**: its encoder is exported once into a cache and read from
  there (`tft_allennlp.archives.encoder_cache`), so that injection and fine-tuning are two
  `allennlp train` commands. The archives package, above every component that reads a
  transformer, plugs that reader in here (`read_model_archives_with`) when it is imported, as
  `import tft_allennlp` does.
"""

import functools
import hashlib
import json
import os
import re
import shutil
import tempfile
from typing import Callable, List, Optional, Tuple

import safetensors.torch
import torch
import transformers
from allennlp.common.checks import ConfigurationError
from allennlp.models.archival import _WEIGHTS_NAME
from safetensors import SafetensorError

from tft_allennlp.common.archive_extraction import (
    ARCHIVED_TRANSFORMERS,
    UntrustedArchiveError,
    archive_name,
)
from tft_allennlp.common.untrusted_archives import check_state, check_tensors
from tft_host_patches import remote_code

POOLER_FILE = "dropped_pooler.safetensors"
"""The checkpoint's pooler, which the embedder drops from the model, in its copy."""
SENTENCE_TRANSFORMERS_MODULES = "modules.json"
_WEIGHT_SUFFIXES = (
    ".safetensors",
    ".bin",
    ".pt",
    ".pth",
    ".th",
    ".h5",
    ".msgpack",
    ".ckpt",
    ".onnx",
    ".ot",
    ".tflite",
    ".pb",
    ".index.json",
)
_model_archive_reader: Optional[Callable[[str], str]] = None


def transformer_source(model_name: str, serialization_dir: Optional[str] = None) -> str:
    """
    The directory (or hub name) to load `model_name`'s config and tokenizer from: the archive's
    copy when `serialization_dir` is an extracted archive that holds one, the exported encoder
    when `model_name` is a model archive, else `model_name`. During training (a serialization
    directory that is not an extracted archive) it also copies the files for the archive.
    """
    check_model_name(model_name)
    archived = archived_copy(model_name, serialization_dir)
    if archived is not None:
        for name, classes in _remote_classes(archived):
            # Code in an archive is the archive author's, whatever model it claims to be.
            where = archive_name(os.path.join(archived, name))
            raise UntrustedArchiveError(
                f"{where}: refused: maps {classes} to code in the archive (auto_map), and an "
                f"archive runs no code, even of a model named in {remote_code.VARIABLE}"
            )
        return archived
    if serialization_dir is not None and is_extracted_archive(serialization_dir):
        # An archive is self-contained: the name it gives is data, never a path to read or a
        # model to download on the user's behalf.
        where = archive_name(os.path.join(serialization_dir, "config.json"))
        raise UntrustedArchiveError(
            f"{where}: refused: names the model {model_name[:200]!r} but holds no copy of its "
            f"files ({ARCHIVED_TRANSFORMERS}/); loading would read that path or download that "
            "model, which an archive may not make the plugin do"
        )
    source = _read_model_archive(model_name) if os.path.isfile(model_name) else model_name
    check_remote_code(model_name, source)
    if serialization_dir is not None and not is_extracted_archive(serialization_dir):
        _copy_for_archive(source, copy_directory(model_name, serialization_dir))
    return source


def check_model_name(model_name: str) -> None:
    """
    A `ConfigurationError` for a `model_name` that names nothing transformers could load: an
    empty one (`TFT_MODEL=`), or a symbolic link that leads nowhere (a loop, a missing target),
    which transformers would take for a hub name and refuse in a traceback.
    """
    if not model_name.strip():
        variable = os.environ.get("TFT_MODEL")
        cause = (
            " (TFT_MODEL is set, and empty)"
            if variable is not None and not variable.strip()
            else ""
        )
        raise ConfigurationError(
            f"the model name is empty{cause}: give a Hugging Face checkpoint (a local folder or a "
            "hub name) or a model archive"
        )
    if os.path.islink(model_name) and not os.path.exists(model_name):
        raise ConfigurationError(
            f"{model_name}: a symbolic link that leads to no file or folder (a loop, or a missing "
            "target)"
        )


def check_remote_code(model_name: str, source: str) -> None:
    """
    A `ConfigurationError` naming `model_name` when its checkpoint (`source`: a folder, or a hub
    name whose files transformers can find, in its cache or on the hub) maps a class to its own
    code (an `auto_map` in `config.json` or `tokenizer_config.json`) and the user has not named it
    in `TFT_TRUST_REMOTE_CODE`: transformers would otherwise ask on the terminal whether to run
    that code, or fail in a traceback (`tft_host_patches.remote_code`). A hub name whose files
    cannot be found, and files that are not JSON objects, are left to transformers.
    """
    if remote_code.trusts(model_name) or remote_code.trusts(source):
        return
    for name, classes in _remote_classes(source):
        raise ConfigurationError(
            f"{model_name}: refused: its {name} maps {classes} to the checkpoint's own code "
            f"(auto_map), which runs only for a model named in {remote_code.VARIABLE} "
            f"({remote_code.VARIABLE}={model_name} if you trust it; docs/security.md)"
        )


def _remote_classes(source: str) -> List[Tuple[str, List[str]]]:
    """(file, the classes its `auto_map` maps) of each of `source`'s configs that has one."""
    found = []
    for name in ("config.json", "tokenizer_config.json"):
        path = _config_file(source, name)
        if path is None:
            continue
        try:
            with open(path, encoding="utf-8") as handle:
                config = json.load(handle)
        except (OSError, ValueError):
            continue
        if isinstance(config, dict) and isinstance(config.get("auto_map"), dict):
            if config["auto_map"]:
                found.append((name, sorted(config["auto_map"])))
    return found


def _config_file(source: str, name: str) -> Optional[str]:
    if os.path.isdir(source):
        return os.path.join(source, name)
    return _hub_config_file(source, name)


@functools.lru_cache(maxsize=None)
def _hub_config_file(source: str, name: str) -> Optional[str]:
    # Once per process: every component that reads the model asks (tokenizer, indexer,
    # embedder, head), and online each lookup is a request to the hub.
    try:
        # A hub name: the file transformers itself reads next (its cache, or one download).
        return transformers.utils.hub.cached_file(
            source,
            name,
            _raise_exceptions_for_missing_entries=False,
            _raise_exceptions_for_connection_errors=False,
            _raise_exceptions_for_gated_repo=False,
        )
    except Exception:  # noqa: BLE001 (not a loadable name: transformers says why when it loads)
        return None


def is_extracted_archive(serialization_dir: str) -> bool:
    """Whether `serialization_dir` is a model archive unpacked by `load_archive`: it holds
    `weights.th`, which training never writes."""
    return os.path.isfile(os.path.join(serialization_dir, _WEIGHTS_NAME))


def copy_directory(model_name: str, serialization_dir: str) -> str:
    """Where the copy of `model_name`'s files lives in `serialization_dir`."""
    stem = os.path.basename(os.path.normpath(model_name))
    stem = re.sub(r"\.tar\.gz$", "", stem)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem)[:48] or "model"
    digest = hashlib.sha256(model_name.encode("utf-8")).hexdigest()[:12]
    return os.path.join(serialization_dir, ARCHIVED_TRANSFORMERS, f"{stem}-{digest}")


def archived_copy(model_name: str, serialization_dir: Optional[str]) -> Optional[str]:
    """The copy of `model_name`'s files in the extracted archive `serialization_dir`, if any."""
    if serialization_dir is None or not is_extracted_archive(serialization_dir):
        return None
    directory = copy_directory(model_name, serialization_dir)
    return directory if os.path.isdir(directory) else None


def keep_dropped_pooler(
    model_name: str, serialization_dir: Optional[str], pooler: torch.nn.Module
) -> None:
    """Stores the pooler that the embedder drops in the copy of `model_name`'s files (training
    only; once per serialization directory)."""
    if serialization_dir is None or is_extracted_archive(serialization_dir):
        return
    path = os.path.join(copy_directory(model_name, serialization_dir), POOLER_FILE)
    if os.path.exists(path):
        return
    state = {
        name: tensor.detach().cpu().contiguous() for name, tensor in pooler.state_dict().items()
    }
    staging = f"{path}.{os.getpid()}.tmp"
    safetensors.torch.save_file(state, staging)
    os.replace(staging, path)


def load_archived_pooler(directory: str, pooler: torch.nn.Module) -> bool:
    """
    Loads the pooler weights kept by `keep_dropped_pooler` in the copy `directory` into
    `pooler`; False if there are none. Weights that are not a safetensors file, or do not fit
    the pooler, are an `UntrustedArchiveError` naming the archive, the file and the tensor.
    """
    path = os.path.join(directory, POOLER_FILE)
    if not os.path.isfile(path):
        return False
    where = archive_name(path)
    try:
        state = safetensors.torch.load_file(path)
    except (SafetensorError, ValueError, RuntimeError) as error:  # a header that lies, ...
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0][:120]
        raise UntrustedArchiveError(
            f"{where}: refused: not a safetensors file ({reason})"
        ) from None
    check_tensors(state, where)
    check_state(pooler, state, where)
    pooler.load_state_dict(state)
    return True


def sentence_transformers_modules(directory: str) -> Optional[List[dict]]:
    """The module list of a sentence-transformers model directory (`modules.json`), if any."""
    path = os.path.join(directory, SENTENCE_TRANSFORMERS_MODULES)
    if not os.path.isfile(path):
        return None
    with open(path) as handle:
        return json.load(handle)


def read_model_archives_with(reader: Callable[[str], str]) -> None:
    """Reads a model archive given as `model_name` with `reader`, which returns the checkpoint
    directory of its encoder (`tft_allennlp.archives.encoder_cache.exported_encoder`)."""
    global _model_archive_reader
    _model_archive_reader = reader


def _read_model_archive(archive_file: str) -> str:
    if _model_archive_reader is None:
        raise ConfigurationError(
            f"{archive_file}: a model archive as model_name is read by tft_allennlp.archives; "
            "import tft_allennlp first."
        )
    return _model_archive_reader(archive_file)


def _copy_for_archive(source: str, target: str) -> None:
    """Copies `source`'s files except the transformer's weights to `target`, unless there."""
    if os.path.isdir(target):
        return
    os.makedirs(os.path.dirname(target), exist_ok=True)
    staging = tempfile.mkdtemp(dir=os.path.dirname(target), prefix=".staging-")
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(staging, 0o777 & ~umask)  # mkdtemp's 0700 would travel in the archive
    try:
        if os.path.isdir(source):
            _copy_files(source, staging)
        else:
            # A hub name: the files as transformers reads them, and any sentence-transformers
            # files already in its local snapshot.
            transformers.AutoConfig.from_pretrained(source).save_pretrained(staging)
            transformers.AutoTokenizer.from_pretrained(source).save_pretrained(staging)
            config_file = transformers.utils.cached_file(source, "config.json")
            if config_file is not None:
                _copy_sentence_transformers_files(os.path.dirname(config_file), staging)
        _rename_unless_there(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _copy_files(source: str, target: str) -> None:
    for name in sorted(os.listdir(source)):
        path = os.path.join(source, name)
        if not name.startswith(".") and os.path.isfile(path) and not _is_weights(name):
            shutil.copyfile(path, os.path.join(target, name))
    _copy_sentence_transformers_files(source, target)


def _copy_sentence_transformers_files(source: str, target: str) -> None:
    """The module folders of a sentence-transformers model (pooling, normalisation, dense
    layers, with their weights), the transformer's own excepted."""
    for name in ("modules.json", "sentence_bert_config.json", "config_sentence_transformers.json"):
        path = os.path.join(source, name)
        if os.path.isfile(path) and not os.path.exists(os.path.join(target, name)):
            shutil.copyfile(path, os.path.join(target, name))
    for module in sentence_transformers_modules(source) or []:
        folder = module.get("path", "")
        if folder and not module.get("type", "").endswith(".Transformer"):
            if os.path.isdir(os.path.join(source, folder)):
                shutil.copytree(os.path.join(source, folder), os.path.join(target, folder))


def _is_weights(name: str) -> bool:
    return name.endswith(_WEIGHT_SUFFIXES)


def _rename_unless_there(staging: str, target: str) -> None:
    """Moves `staging` to `target`; a `target` that another process completed first wins."""
    try:
        os.rename(staging, target)
    except OSError:
        if not os.path.isdir(target):
            raise
