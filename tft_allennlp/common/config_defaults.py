"""
The variables that `training_configs/` read with `std.extVar`, with their documented defaults, so
that a plain `allennlp train training_configs/glue/mrpc.jsonnet` works, and the package's folder
on jsonnet's import path, so that a config anywhere can build on the shipped ones
(`import 'training_configs/common/task.libsonnet'`, docs/tasks.md), and the shipped configs
themselves by their relative paths from any folder (`allennlp train
training_configs/glue/mrpc.jsonnet` outside the checkout).

All three apply where AllenNLP reads configs, not in `os.environ`:
`tft_host_patches/config_defaults.py` wraps AllenNLP's `params._environment_variables` (the
environment plus these defaults; a value set in the environment always wins), `params.evaluate_file`
(the package's folder as a library path, after the config's own folder) and `params.cached_path`,
which `Params.from_file` calls on the config's path and nothing else in `params` does
(`shipped_config`; a file of that name in the current folder always wins).
`tft_host_patches.plugin` installs it; AllenNLP imports plugins before it reads a config.
"""

import logging
import os
from typing import Optional, Union

logger = logging.getLogger(__name__)


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
