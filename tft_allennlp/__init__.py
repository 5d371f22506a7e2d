"""
tft-allennlp: transfer fine-tuning (Arase & Tsujii, 2019) as an AllenNLP plugin.

Importing the package registers every component (AllenNLP imports plugins non-recursively) and
applies the plugin's changes to AllenNLP, each listed with why and how to remove it in
`tft_host_patches.plugin`: among them, the documented defaults of the variables that
`training_configs/` read (`CONFIG_DEFAULTS`), and the shipped configs (`CONFIGS_ROOT`) on
jsonnet's import path.
"""

import tft_host_patches
import tft_host_patches.plugin

# The stack's gaps first: AllenNLP does not import on today's Hugging Face stack without them
# (the start-up hook has done this already where the plugin is installed).
tft_host_patches.install_at_startup()

from tft_allennlp import (  # noqa: E402
    archives,
    commands,
    data_loaders,
    dataset_readers,
    metrics,
    models,
    modules,
    predictors,
    token_indexers,
    tokenizers,
    training,
)
from tft_allennlp.common.config_defaults import (  # noqa: E402, F401  (public)
    CONFIG_DEFAULTS,
    CONFIGS_ROOT,
)

tft_host_patches.plugin.install()
