"""
tft-allennlp: transfer fine-tuning (Arase & Tsujii, 2019) as an AllenNLP plugin.

Importing the package registers every component (AllenNLP imports plugins non-recursively).

It also gives the variables that `training_configs/` read with `std.extVar` their documented
defaults, so that a plain `allennlp train training_configs/glue/mrpc.jsonnet` works, and puts
the shipped configs on jsonnet's import path, so that a config anywhere can build on them
(`import 'training_configs/common/task.libsonnet'`, docs/tasks.md). It does both where AllenNLP
reads configs, not in `os.environ`: `Params.from_file` evaluates jsonnet with the environment
plus these defaults (a value set in the environment always wins) and with the package's folder
as a library path (after the config's own folder). Wrapping AllenNLP's
`params._environment_variables` and `params.evaluate_file` are the changes the plugin makes to
its host on import; AllenNLP imports plugins before it reads a config. Six more: `allennlp train`
reuses a serialization directory that a failed start left with nothing trained in it
(`training/serialization_dir.py`), writes the files of a training run atomically
(`training/run_files.py`), stops on SIGTERM or Ctrl-C with a checkpoint at the batch it was
training (`training/stop_signals.py`), the `allennlp` command line prints progress, warnings and
results, not AllenNLP's full log, unless `TFT_VERBOSE=1` (`common/console.py`), model archives
are loaded as untrusted input: members only inside the extraction folder, a config of registered
names, weights without pickled code (`common/untrusted_archives.py`), and `allennlp predict` and
`evaluate` never write over a file they read and name a bad input line by file and line
(`predictors/allennlp_commands.py`).
"""

import os
from typing import Any, Callable, Dict

from allennlp.common import params as _params

PACKAGE_ROOT = os.path.dirname(os.path.abspath(__file__))
CONFIGS_ROOT = os.path.join(PACKAGE_ROOT, "training_configs")
"""The shipped configs (`allennlp tft-configs` prints where they are)."""

CONFIG_DEFAULTS = {
    # Any Hugging Face hub name or local checkpoint directory.
    "TFT_MODEL": "bert-base-uncased",
    # The official GLUE download: $GLUE_DIR/MRPC/train.tsv, $GLUE_DIR/STS-B/dev.tsv, ...
    "GLUE_DIR": "glue_data",
    # The larger base of the claims grid (training_configs/experiments/claims_*.jsonnet).
    "TFT_LARGE_MODEL": "sentence-transformers/all-mpnet-base-v2",
    # The aligned paraphrase corpus for injection (JSON lines, see docs/injection.md).
    "TFT_PARAPHRASE_CORPUS": "aligned_paraphrases.jsonl",
    # Output folder of training_configs/experiments/ specs.
    "TFT_EXPERIMENT_DIR": "results/experiment",
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


if getattr(_params._environment_variables, "__name__", "") != "_config_variables":
    _params._environment_variables = _config_variables
if getattr(_params.evaluate_file, "__name__", "") != "_evaluate_file":
    _params.evaluate_file = _evaluate_file

from tft_allennlp import (  # noqa: E402  (after the defaults, which AllenNLP must see first)
    commands,
    data_loaders,
    dataset_readers,
    models,
    modules,
    predictors,
    token_indexers,
    tokenizers,
    training,
)  # noqa: E402,F401
from tft_allennlp.common import console, untrusted_archives  # noqa: E402
from tft_allennlp.predictors import allennlp_commands  # noqa: E402
from tft_allennlp.training import run_files, serialization_dir, stop_signals  # noqa: E402

serialization_dir.install()
run_files.install()
stop_signals.install()
console.install()
allennlp_commands.install()
untrusted_archives.install()
