"""
The variables that `training_configs/` read with `std.extVar`, with their documented defaults, so
that a plain `allennlp train training_configs/glue/mrpc.jsonnet` works, and the package's folder
on jsonnet's import path, so that a config anywhere can build on the shipped ones
(`import 'training_configs/common/task.libsonnet'`, docs/tasks.md), and the shipped configs
themselves by their relative paths from any folder (`allennlp train
training_configs/glue/mrpc.jsonnet` outside the checkout).

All three apply where AllenNLP reads configs, not in `os.environ`: `install` wraps AllenNLP's
`params._environment_variables` (the environment plus these defaults; a value set in the
environment always wins), `params.evaluate_file` (the package's folder as a library path,
after the config's own folder) and `params.cached_path`, which `Params.from_file` calls on the
config's path and nothing else in `params` does (`shipped_config`; a file of that name in the
current folder always wins). `tft_allennlp.host_patches` calls it; AllenNLP imports plugins
before it reads a config.
"""

import logging
import os
from typing import Any, Callable, Dict, Optional, Union

from allennlp.common import params as _params

from tft_host_patches import replace

logger = logging.getLogger(__name__)

PATCH = "config_defaults"

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
"""The package's folder, which jsonnet searches for imports after the config's own."""
CONFIGS_ROOT = os.path.join(PACKAGE_ROOT, "training_configs")
"""The shipped configs (`allennlp tft-configs` prints where they are)."""

CONFIG_DEFAULTS = {
    # Any Hugging Face hub name or local checkpoint directory.
    "TFT_MODEL": "bert-base-uncased",
    # The official GLUE download: $GLUE_DIR/MRPC/train.tsv, $GLUE_DIR/STS-B/dev.tsv, ...
    "GLUE_DIR": "glue_data",
    # The aligned paraphrase corpus for injection (JSON lines, see docs/injection.md).
    "TFT_PARAPHRASE_CORPUS": "aligned_paraphrases.jsonl",
    # GPUs of training_configs/distributed/ (comma-separated ids).
    "TFT_CUDA_DEVICES": "0,1",
    # Machines of training_configs/distributed/ (docs/distributed.md): how many, and where the
    # first one (node rank 0) listens.
    "TFT_NUM_NODES": "1",
    "TFT_PRIMARY_ADDRESS": "127.0.0.1",
    "TFT_PRIMARY_PORT": "29500",
}


def _config_variables(
    environment: Callable[[], Dict[str, str]] = _params._environment_variables,
) -> Dict[str, str]:
    """The environment as AllenNLP passes it to jsonnet, over the plugin's defaults."""
    return {**CONFIG_DEFAULTS, **environment()}


def _evaluate_file(
    filename: str, *, _evaluate: Callable[..., str] = _params.evaluate_file, **kwargs: Any
) -> str:
    """jsonnet's `evaluate_file`, with the package's folder as a library path."""
    kwargs.setdefault("jpathdir", PACKAGE_ROOT)
    return _evaluate(filename, **kwargs)


def shipped_config(path: Union[str, "os.PathLike[str]"]) -> Optional[str]:
    """
    The shipped config that `path` names, or `None`: `path` must be relative, start with
    `training_configs/`, name no file in the current folder and name a file under `CONFIGS_ROOT`.
    """
    if not isinstance(path, (str, os.PathLike)):
        return None
    path = os.fspath(path)
    if not isinstance(path, str) or os.path.isabs(path) or os.path.exists(path):
        return None
    # normpath folds `..`, so a path that still starts with `training_configs` stays inside it.
    parts = os.path.normpath(path).split(os.sep)
    if len(parts) < 2 or parts[0] != os.path.basename(CONFIGS_ROOT):
        return None
    shipped = os.path.join(CONFIGS_ROOT, *parts[1:])
    return shipped if os.path.isfile(shipped) else None


def _cached_path(
    url_or_filename: Union[str, "os.PathLike[str]"],
    *args: Any,
    _cached_path: Callable[..., str] = _params.cached_path,
    **kwargs: Any,
) -> str:
    """AllenNLP's `cached_path` for `Params.from_file`, with a missing `training_configs/...`
    path read from the shipped configs, in one line on the terminal."""
    shipped = shipped_config(url_or_filename)
    if shipped is not None:
        logger.info("using the shipped config %s", shipped)
        url_or_filename = shipped
    return _cached_path(url_or_filename, *args, **kwargs)


def install() -> None:
    """Puts `_config_variables`, `_evaluate_file` and `_cached_path` in place of AllenNLP's
    (once), where `Params.from_file` looks them up when it reads a config."""
    replace(_params, "_environment_variables", _config_variables, patch=PATCH)
    replace(_params, "evaluate_file", _evaluate_file, patch=PATCH)
    replace(_params, "cached_path", _cached_path, patch=PATCH)
