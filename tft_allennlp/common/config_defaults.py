"""
The variables that `training_configs/` read with `std.extVar`, with their documented defaults, so
that a plain `allennlp train training_configs/glue/mrpc.jsonnet` works, and the package's folder
on jsonnet's import path, so that a config anywhere can build on the shipped ones
(`import 'training_configs/common/task.libsonnet'`, docs/tasks.md).

Both apply where AllenNLP reads configs, not in `os.environ`: `install` wraps AllenNLP's
`params._environment_variables` (the environment plus these defaults; a value set in the
environment always wins) and `params.evaluate_file` (the package's folder as a library path,
after the config's own folder). `tft_allennlp.host_patches` calls it; AllenNLP imports plugins
before it reads a config.
"""

import os
from typing import Any, Callable, Dict

from allennlp.common import params as _params

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
"""The package's folder, which jsonnet searches for imports after the config's own."""
CONFIGS_ROOT = os.path.join(PACKAGE_ROOT, "training_configs")
"""The shipped configs (`allennlp tft-configs` prints where they are)."""

CONFIG_DEFAULTS = {
    # Any Hugging Face hub name or local checkpoint directory.
    "TFT_MODEL": "bert-base-uncased",
    # The official GLUE download: $GLUE_DIR/MRPC/train.tsv, $GLUE_DIR/STS-B/dev.tsv, ...
    "GLUE_DIR": "glue_data",
    # The larger base of the claims grid (research/specs/claims_*.jsonnet).
    "TFT_LARGE_MODEL": "sentence-transformers/all-mpnet-base-v2",
    # The aligned paraphrase corpus for injection (JSON lines, see docs/injection.md).
    "TFT_PARAPHRASE_CORPUS": "aligned_paraphrases.jsonl",
    # Output folder of research/specs/ specs.
    "TFT_EXPERIMENT_DIR": "research/results/experiment",
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


def install() -> None:
    """Puts `_config_variables` and `_evaluate_file` in place of AllenNLP's (once), where
    `Params.from_file` looks them up when it reads a config."""
    if getattr(_params._environment_variables, "__name__", "") != "_config_variables":
        _params._environment_variables = _config_variables
    if getattr(_params.evaluate_file, "__name__", "") != "_evaluate_file":
        _params.evaluate_file = _evaluate_file
