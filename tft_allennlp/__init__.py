"""
tft-allennlp: transfer fine-tuning (Arase & Tsujii, 2019) as an AllenNLP plugin.

Importing the package registers every component (AllenNLP imports plugins non-recursively),
and gives the environment variables read by `training_configs/` their documented defaults, so
that a plain `allennlp train training_configs/glue/mrpc.jsonnet` works. AllenNLP imports
plugins before it reads a config.
"""
import os

CONFIG_DEFAULTS = {
    # Any Hugging Face hub name or local checkpoint directory.
    "TFT_MODEL": "bert-base-uncased",
    # The official GLUE download: $GLUE_DIR/MRPC/train.tsv, $GLUE_DIR/STS-B/dev.tsv, ...
    "GLUE_DIR": "glue_data",
    # The aligned paraphrase corpus for injection (JSON lines, see README).
    "TFT_PARAPHRASE_CORPUS": "aligned_paraphrases.jsonl",
    # Output folder of training_configs/experiments/ specs.
    "TFT_EXPERIMENT_DIR": "results/experiment",
    # GPUs of training_configs/distributed/ (comma-separated ids).
    "TFT_CUDA_DEVICES": "0,1",
}
for _name, _value in CONFIG_DEFAULTS.items():
    os.environ.setdefault(_name, _value)

from tft_allennlp import commands, data_loaders, dataset_readers, models, modules, predictors, training  # noqa: E402,F401
