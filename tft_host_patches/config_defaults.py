"""
AllenNLP reads configs with the plugin's defaults, library path and shipped configs: what
`tft_allennlp.common.config_defaults` describes, put in place. Replaces AllenNLP's
`params._environment_variables` (the environment over the plugin's defaults),
`params.evaluate_file` (the package's folder as a second jsonnet library path) and
`params.cached_path`, which only `Params.from_file` calls there (a missing `training_configs/...`
path read from the shipped configs). Remove a part by deleting its `replace` below
(`tests/registration_test.py`, `tests/common/shipped_configs_test.py`).
"""

import logging
import os
from typing import Any, Callable, Dict, Union

from allennlp.common import params as _params

from tft_host_patches import replace

# The plugin's logger for it, whose one line the quiet terminal keeps (`common/console.py`).
logger = logging.getLogger("tft_allennlp.common.config_defaults")

PATCH = "config_defaults"


def _config_variables(
    environment: Callable[[], Dict[str, str]] = _params._environment_variables,
) -> Dict[str, str]:
    """The environment as AllenNLP passes it to jsonnet, over the plugin's defaults."""
    from tft_allennlp.common.config_defaults import CONFIG_DEFAULTS

    return {**CONFIG_DEFAULTS, **environment()}


def _evaluate_file(
    filename: str, *, _evaluate: Callable[..., str] = _params.evaluate_file, **kwargs: Any
) -> str:
    """jsonnet's `evaluate_file`, with the package's folder as a library path."""
    from tft_allennlp.common.config_defaults import PACKAGE_ROOT

    kwargs.setdefault("jpathdir", PACKAGE_ROOT)
    return _evaluate(filename, **kwargs)


def _cached_path(
    url_or_filename: Union[str, "os.PathLike[str]"],
    *args: Any,
    _cached_path: Callable[..., str] = _params.cached_path,
    **kwargs: Any,
) -> str:
    """AllenNLP's `cached_path` for `Params.from_file`, with a missing `training_configs/...`
    path read from the shipped configs, in one line on the terminal."""
    from tft_allennlp.common.config_defaults import shipped_config

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
