"""
Components whose package the plugin's install leaves to an extra. A training config that names
one where its package is not installed stops before anything is read or built, in one line that
names the package and the extra that installs it. AllenNLP's `wandb` callback would import
`wandb` only once training starts, after the data is read and the model built, and end in a
traceback.
"""

import importlib.util
from typing import Any, Dict, List, Tuple

from allennlp.common.checks import ConfigurationError

# A trainer callback's registered name -> the package it imports, and the extra of tft-allennlp
# that installs it (setup.py's `extras_require`).
CALLBACK_PACKAGES: Dict[str, Tuple[str, str]] = {
    "wandb": ("wandb", "tracking"),
    "mlflow": ("mlflow", "tracking"),
}


def callback_names(config: Dict[str, Any]) -> List[Tuple[int, str]]:
    """
    The registered name of each trainer callback of the training `config` (as `allennlp train`
    reads it), with its index in `trainer.callbacks`; entries without a name are left out.
    """
    trainer = config.get("trainer")
    callbacks = trainer.get("callbacks") if isinstance(trainer, dict) else None
    names = []
    for index, callback in enumerate(callbacks if isinstance(callbacks, list) else []):
        name = callback.get("type") if isinstance(callback, dict) else callback
        if isinstance(name, str):
            names.append((index, name))
    return names


def check_optional_packages(config: Dict[str, Any], where: str = "config") -> None:
    """
    Raises a `ConfigurationError` for the first trainer callback of the training `config` (as
    `allennlp train` reads it, overrides applied) whose package is not installed.
    """
    for index, name in callback_names(config):
        if name not in CALLBACK_PACKAGES:
            continue
        package, extra = CALLBACK_PACKAGES[name]
        if importlib.util.find_spec(package) is None:
            raise ConfigurationError(
                f"{where}: trainer.callbacks.{index} is the {name!r} callback, which needs the "
                f"{package} package; it is not installed: pip install 'tft-allennlp[{extra}]'"
            )
