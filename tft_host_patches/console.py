"""
The quiet terminal of the `allennlp` command, put in place: what `tft_allennlp.common.console`
describes. `install` (the command line only) wraps `sys.excepthook` (an error of the user's in one
line, `error: ... (traceback: LOG)`) and AllenNLP's `prepare_global_logging` (which `train` calls
to replace the handlers: the terminal's get the filter again), quietens transformers' bars over
local work and two third-party warnings a user cannot act on. Remove to get AllenNLP's own output
back (`tests/console_test.py`, `tests/console_errors_test.py`).
"""

import sys
import traceback
import warnings
from types import TracebackType
from typing import Any, Callable, Optional, Type

from tft_host_patches import import_hooks, replace

PATCH = "console"

_IGNORED_PYTHON_WARNINGS = (
    (FutureWarning, r"`torch\.cuda\.amp\.(autocast|GradScaler)"),
    (UserWarning, r"pkg_resources is deprecated"),
)


def install() -> None:
    """Quietens the terminal of the `allennlp` command, unless the user asked for everything."""
    from tft_allennlp.common.console import in_allennlp_command, quieten_handlers, verbose

    if not in_allennlp_command():
        return
    _install_model_hint()
    # Not a log, so not back with it: a bar over a second of local work says nothing.
    import_hooks.after_import("transformers.utils.logging", _no_transformers_bars)
    if verbose():
        return
    for category, pattern in _IGNORED_PYTHON_WARNINGS:
        warnings.filterwarnings("ignore", message=pattern, category=category)
    quieten_handlers()
    from allennlp.common import logging as common_logging

    prepare = common_logging.prepare_global_logging

    def _quiet_prepare_global_logging(*args: Any, **kwargs: Any) -> None:
        # AllenNLP replaces the handlers (file, stdout, stderr) for `train`: the file keeps
        # everything, the terminal handlers get the filter.
        prepare(*args, **kwargs)
        quieten_handlers()
        _install_model_hint()

    replace(common_logging, "prepare_global_logging", _quiet_prepare_global_logging, patch=PATCH)


def _no_transformers_bars(transformers_logging: Any) -> None:
    # transformers' own bars (not the hub's) are over a second of local work each: a model's
    # weights loaded or written. Its hook decides what each `tqdm` call makes.
    empty = transformers_logging.EmptyTqdm
    transformers_logging.set_tqdm_hook(lambda factory, args, kwargs: empty(*args, **kwargs))


def _install_model_hint() -> None:
    """
    Wraps `sys.excepthook` so that an error of the user's (`user_error`) ends with its one
    line, `error: ...`, naming the log that keeps its traceback, and nothing else: not
    AllenNLP's `CRITICAL: Uncaught exception` and its traceback (which `train`'s excepthook,
    wrapped here, logs to the terminal too). A bug keeps its traceback.
    """
    from tft_allennlp.common.console import keep_traceback, user_error, verbose

    current: Callable[..., Any] = sys.excepthook

    def _model_hint_excepthook(
        kind: Type[BaseException], error: BaseException, traceback_: Optional[TracebackType]
    ) -> None:
        line = user_error(error)
        if line is None:
            current(kind, error, traceback_)
            return
        if verbose():
            traceback.print_exception(kind, error, traceback_)
        where = keep_traceback(error, traceback_, line)
        suffix = "" if where is None else f" (traceback: {where})"
        print(f"error: {line}{suffix}", file=sys.stderr)

    replace(sys, "excepthook", _model_hint_excepthook, patch=PATCH)
