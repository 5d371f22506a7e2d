"""
Progress bars that fit the terminal, put in place in the `allennlp` command: what
`tft_allennlp.common.progress` describes. Replaces AllenNLP's `Tqdm.tqdm` (a `FittedBar`), the
trainer's `description_from_metrics` (loss and main metric, abbreviated) and wraps
`GradientDescentTrainer._try_train` (which metric is main) and `prepare_global_logging` (the
terminal's handlers write around open bars). Remove to get AllenNLP's bars back
(`tests/common/progress_test.py`, `tests/console_test.py`).
"""

from typing import Any

from tft_host_patches import previous, replace

PATCH = "progress"
_installed = False


def _fitted_tqdm(*args: Any, **kwargs: Any) -> Any:
    from tft_allennlp.common.progress import FittedBar

    return FittedBar(*args, **kwargs)


def _try_train(self: Any) -> Any:
    from allennlp.training.gradient_descent_trainer import GradientDescentTrainer

    from tft_allennlp.common.progress import main_metrics

    with main_metrics(name for _, name in self._metric_tracker.tracked_metrics):
        return previous(GradientDescentTrainer, "_try_train", PATCH)(self)


def _prepare_global_logging(*args: Any, **kwargs: Any) -> None:
    from allennlp.common import logging as common_logging

    from tft_allennlp.common.progress import fit_handlers

    # `train` replaces the root logger's handlers (a file, stdout, stderr).
    previous(common_logging, "prepare_global_logging", PATCH)(*args, **kwargs)
    fit_handlers()


def install() -> None:
    """
    Makes the bars of the `allennlp` command fit its terminal: `Tqdm.tqdm` makes a
    `FittedBar`, the trainer's bars carry `bar_description`, the terminal's log handlers write
    through `BarSafeStream`.
    """
    from tft_allennlp.common.console import in_allennlp_command
    from tft_allennlp.common.progress import bar_description, fit_handlers

    if not in_allennlp_command():
        return
    global _installed
    fit_handlers()
    if _installed:
        return
    _installed = True
    from allennlp.common import logging as common_logging
    from allennlp.common.tqdm import Tqdm
    from allennlp.training import util as training_util
    from allennlp.training.gradient_descent_trainer import GradientDescentTrainer

    replace(Tqdm, "tqdm", staticmethod(_fitted_tqdm), patch=PATCH)
    replace(training_util, "description_from_metrics", bar_description, patch=PATCH)
    replace(GradientDescentTrainer, "_try_train", _try_train, patch=PATCH)
    replace(common_logging, "prepare_global_logging", _prepare_global_logging, patch=PATCH)
