"""
tft-allennlp: transfer fine-tuning (Arase & Tsujii, 2019) as an AllenNLP plugin.

Importing the package registers every component (AllenNLP imports plugins non-recursively).

It also gives the variables that `training_configs/` read with `std.extVar` their documented
defaults, so that a plain `allennlp train training_configs/glue/mrpc.jsonnet` works. It does so
where AllenNLP reads configs, not in `os.environ`: `Params.from_file` evaluates jsonnet with the
environment plus these defaults (a value set in the environment always wins).

These are the two changes the plugin makes to its host on import (AllenNLP imports plugins
before it reads a config): the wrapping of AllenNLP's `params._environment_variables`, and
atomic writes of the files of a training run (`tft_allennlp.training.run_files`).
"""

from typing import Callable, Dict

from allennlp.common import params as _params

CONFIG_DEFAULTS = {
    # Any Hugging Face hub name or local checkpoint directory.
    "TFT_MODEL": "bert-base-uncased",
    # The official GLUE download: $GLUE_DIR/MRPC/train.tsv, $GLUE_DIR/STS-B/dev.tsv, ...
    "GLUE_DIR": "glue_data",
    # The larger base of the claims grid (training_configs/experiments/claims_*.jsonnet).
    "TFT_LARGE_MODEL": "sentence-transformers/all-mpnet-base-v2",
    # The aligned paraphrase corpus for injection (JSON lines, see docs/injection.md).
    "TFT_PARAPHRASE_CORPUS": "aligned_paraphrases.jsonl",
    # The same pairs aligned by the aligner before issue 19 (alignment_downstream_cpu.jsonnet).
    "TFT_PARAPHRASE_CORPUS_OLD_ALIGNER": "aligned_paraphrases_old_aligner.jsonl",
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


if getattr(_params._environment_variables, "__name__", "") != "_config_variables":
    _params._environment_variables = _config_variables

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
from tft_allennlp.training import run_files  # noqa: E402

run_files.install()
