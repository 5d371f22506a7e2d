"""
What the `allennlp` command prints to the terminal while the plugin is loaded: progress bars,
warnings a user can act on, and results (each epoch's metrics table, the final metrics,
evaluation scores, what a `tft-*` command wrote), not AllenNLP's parameter dumps, "Tunable"
lines, plugin and initializer chatter, or third-party deprecation warnings. The full log still
goes to the serialization directory's `out.log`, which keeps every record.

`TFT_VERBOSE=1` (or setting `ALLENNLP_LOG_LEVEL` / `ALLENNLP_DEBUG` yourself) brings the full
log back to the terminal. Only the `allennlp` command line is quietened: a program that imports
the plugin keeps its own logging as it set it up.

Also here, for the same command line: when the default model `bert-base-uncased` (used because
`TFT_MODEL` is unset) cannot be loaded, the command ends with one line that names `TFT_MODEL`
instead of the hub's connection traceback, and a refused archive
(`tft_allennlp.common.untrusted_archives`) with the one line that names it and the member.
"""

import logging
import os
import sys
import warnings
from types import TracebackType
from typing import Any, Callable, List, Optional, Type

from tft_allennlp.common.config_defaults import CONFIG_DEFAULTS

logger = logging.getLogger(__name__)

VERBOSE_VARIABLE = "TFT_VERBOSE"

# INFO records the terminal keeps: results, and the one-line summaries a user reads.
_RESULT_LOGGERS = (
    "allennlp.training.callbacks.console_logger",  # each epoch's metrics table
    "allennlp.commands.evaluate",
    "tft_allennlp.commands",
    # What the exports wrote (tft-export, and an archive's encoder put in the cache).
    "tft_allennlp.archives.encoder_export",
    "tft_allennlp.archives.sequence_classification",
    "tft_experiments",  # tft-experiment's progress: runs started, finished, reused
    "tft_allennlp.alignment",  # tft-align's choices (e.g. the spaCy model it fell back to)
    "tft_allennlp.training.callbacks.parameter_counts",
)
_RESULT_PREFIXES = ("Metrics:", "Epoch ", "Finished evaluating")
# Warnings a user cannot act on: AllenNLP's own choices, and its dependencies' deprecations.
_IGNORED_WARNINGS = (
    "patience was set to None",
    "You provided a validation dataset but patience",
)
_IGNORED_PYTHON_WARNINGS = (
    (FutureWarning, r"`torch\.cuda\.amp\.(autocast|GradScaler)"),
    (UserWarning, r"pkg_resources is deprecated"),
)


def verbose() -> bool:
    """Whether the user asked for the full log on the terminal."""
    flag = os.environ.get(VERBOSE_VARIABLE, "").strip().lower()
    return flag not in ("", "0", "false", "no") or any(
        name in os.environ for name in ("ALLENNLP_LOG_LEVEL", "ALLENNLP_DEBUG")
    )


def in_allennlp_command() -> bool:
    """Whether this process is the `allennlp` command (or `python -m allennlp`)."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return os.path.basename(sys.argv[0] if sys.argv else "") == "allennlp" or (
        spec is not None and spec.name == "allennlp.__main__"
    )


class QuietFilter(logging.Filter):
    """Lets warnings (but AllenNLP's unactionable ones) and results through, nothing else."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        if record.levelno >= logging.WARNING:
            return not any(text in message for text in _IGNORED_WARNINGS)
        if record.levelno < logging.INFO:
            return False
        return record.name.startswith(_RESULT_LOGGERS) or message.startswith(_RESULT_PREFIXES)


class ConsoleFormatter(logging.Formatter):
    """Results as their bare message; warnings and errors as `WARNING: message`."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info:
            message += "\n" + self.formatException(record.exc_info)
        if record.levelno >= logging.WARNING:
            return f"{record.levelname}: {message}"
        return message


def quieten_handlers(root: Optional[logging.Logger] = None) -> None:
    """Puts `QuietFilter` and `ConsoleFormatter` on the root logger's terminal handlers."""
    root = root or logging.getLogger()
    for handler in root.handlers:
        terminal = isinstance(handler, logging.StreamHandler) and not isinstance(
            handler, logging.FileHandler
        )
        if terminal and not any(isinstance(f, QuietFilter) for f in handler.filters):
            handler.addFilter(QuietFilter())
            handler.setFormatter(ConsoleFormatter())


def install() -> None:
    """Quietens the terminal of the `allennlp` command, unless the user asked for everything."""
    if not in_allennlp_command():
        return
    _install_model_hint()
    if verbose():
        return
    for category, pattern in _IGNORED_PYTHON_WARNINGS:
        warnings.filterwarnings("ignore", message=pattern, category=category)
    quieten_handlers()
    from allennlp.common import logging as common_logging

    prepare = common_logging.prepare_global_logging
    if getattr(prepare, "__name__", "") == "_quiet_prepare_global_logging":
        return

    def _quiet_prepare_global_logging(*args: Any, **kwargs: Any) -> None:
        # AllenNLP replaces the handlers (file, stdout, stderr) for `train`: the file keeps
        # everything, the terminal handlers get the filter.
        prepare(*args, **kwargs)
        quieten_handlers()
        _install_model_hint()

    common_logging.prepare_global_logging = _quiet_prepare_global_logging


def model_hint(error: BaseException) -> Optional[str]:
    """
    One line for a failure to load the default model because `TFT_MODEL` is unset; None for
    any other error.
    """
    if "TFT_MODEL" in os.environ:
        return None
    default = CONFIG_DEFAULTS["TFT_MODEL"]
    texts: List[str] = []
    cause: Optional[BaseException] = error
    while cause is not None and len(texts) < 10:
        texts.append(f"{type(cause).__name__}: {cause}")
        cause = cause.__cause__ or cause.__context__
    text = "\n".join(texts)
    if default not in text or not any(
        word in text
        for word in ("connect", "Connection", "offline", "OSError", "resolve", "huggingface.co")
    ):
        return None
    return (
        f"TFT_MODEL is not set, so the config uses {default!r} from the Hugging Face hub, "
        "which could not be loaded; set TFT_MODEL to a local model directory (or a hub name "
        "you can reach), e.g. TFT_MODEL=/path/to/model allennlp ..."
    )


def _is_refusal(error: BaseException) -> bool:
    """Whether `error` refuses untrusted input (an archive): its message is the one line."""
    from tft_allennlp.common.untrusted_archives import UntrustedArchiveError

    return isinstance(error, UntrustedArchiveError)


def _install_model_hint() -> None:
    """
    Wraps `sys.excepthook` so that `model_hint`'s case, and a refused archive
    (`UntrustedArchiveError`), end with their one line.
    """
    current: Callable[..., Any] = sys.excepthook
    if getattr(current, "__name__", "") == "_model_hint_excepthook":
        return

    def _model_hint_excepthook(
        kind: Type[BaseException], error: BaseException, traceback: Optional[TracebackType]
    ) -> None:
        hint = model_hint(error)
        if hint is None and _is_refusal(error):
            hint = str(error)
        if hint is None:
            current(kind, error, traceback)
            return
        # The traceback goes to out.log (and to a verbose terminal).
        logger.info("The command stopped: %s", hint, exc_info=(kind, error, traceback))
        print(f"error: {hint}", file=sys.stderr)

    sys.excepthook = _model_hint_excepthook
