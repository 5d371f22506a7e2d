"""
What the `allennlp` command prints to the terminal while the plugin is loaded: progress bars,
warnings a user can act on, and results (each epoch's metrics table, the final metrics,
evaluation scores, what a `tft-*` command wrote), not AllenNLP's parameter dumps, "Tunable"
lines, plugin and initializer chatter, third-party deprecation warnings, or transformers 5's
bars over local work ("Loading weights" for every model built, "Writing model shards"; the
hub's download bars stay). The full log still goes to the serialization directory's `out.log`,
which keeps every record.

`TFT_VERBOSE=1` (or setting `ALLENNLP_LOG_LEVEL` / `ALLENNLP_DEBUG` yourself) brings the full
log back to the terminal (transformers' bars over local work stay off: they are not log). Only
the `allennlp` command line is quietened: a program that imports the plugin keeps its own logging
as it set it up.

Also here, for the same command line: a mistake of the user's (`user_error`: a
`ConfigurationError`, such as an unknown key, an existing output or a refused archive; a
`MalformedInputError`, a bad row or label at `file:line`; a missing or unreadable file; the
default model `bert-base-uncased`, used because `TFT_MODEL` is unset, out of reach) ends the
command with one line, `error: ... (traceback: LOG)`, instead of a traceback: where a path came
from `GLUE_DIR`, `TFT_MODEL`, `TFT_PARAPHRASE_CORPUS` or `TFT_CACHE` (or their defaults), the
line names the variable and how to set it. The traceback goes to the run's log (a training's
`out.log`) or, before there is one, a temporary log, and with `TFT_VERBOSE=1` to the terminal
too. The plugin's commands end the same way (`stopped`). Any other error is a bug and keeps its
traceback.
"""

import contextlib
import errno
import logging
import os
import re
import sys
import tempfile
import traceback
from types import TracebackType
from typing import Iterator, List, Optional, Tuple, Type

from tft_allennlp.common.config_defaults import CONFIG_DEFAULTS

logger = logging.getLogger(__name__)

VERBOSE_VARIABLE = "TFT_VERBOSE"

# INFO records the terminal keeps: results, and the one-line summaries a user reads.
_RESULT_LOGGERS = (
    "allennlp.training.callbacks.console_logger",  # each epoch's metrics table
    "allennlp.commands.evaluate",
    "tft_allennlp.commands",
    "tft_allennlp.common.config_defaults",  # the shipped config a missing path was read from
    # What the exports wrote (tft-export, and an archive's encoder put in the cache).
    "tft_allennlp.archives.encoder_export",
    "tft_allennlp.archives.sequence_classification",
    "tft_experiments",  # tft-experiment's progress: runs started, finished, reused
    "tft_allennlp.alignment",  # tft-align's choices (e.g. the spaCy model it fell back to)
    "tft_allennlp.training.callbacks.parameter_counts",
    "tft_allennlp.training.callbacks.mlflow",  # the MLflow run a run is tracked in
)
_RESULT_PREFIXES = ("Metrics:", "Epoch ", "Finished evaluating")
# INFO records of result loggers that are progress, which the progress bar shows.
_PROGRESS_PREFIXES = ("Reading evaluation data from",)
# Warnings a user cannot act on: AllenNLP's own choices, and its dependencies' deprecations.
_IGNORED_WARNINGS = (
    "patience was set to None",
    "You provided a validation dataset but patience",
    # AllenNLP's W&B callback: wandb finds a key from `wandb login` too, and an offline run
    # needs none; wandb says itself when it has none.
    "Missing environment variable 'WANDB_API_KEY'",
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


# While set (`commands_only`): the terminal shows the results of the plugin's commands only, not
# those of the trainings they run (each epoch's table, the metrics, the parameter counts).
_commands_only = False


@contextlib.contextmanager
def commands_only() -> Iterator[None]:
    """
    While open, the terminal shows no result of a training but the command's own lines (and
    every warning): for a command that trains many times, such as `tft-tune`'s trials.
    """
    global _commands_only
    before, _commands_only = _commands_only, True
    try:
        yield
    finally:
        _commands_only = before


class QuietFilter(logging.Filter):
    """Lets warnings (but AllenNLP's unactionable ones) and results through, nothing else."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        if record.levelno >= logging.WARNING:
            return not any(text in message for text in _IGNORED_WARNINGS)
        if record.levelno < logging.INFO or message.startswith(_PROGRESS_PREFIXES):
            return False
        if _commands_only:
            return record.name.startswith("tft_allennlp.commands")
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
    if not any(
        word in text
        for word in ("connect", "Connection", "offline", "OSError", "resolve", "huggingface.co")
    ):
        return None
    # transformers 4 named the model in its message, transformers 5 does not ("We couldn't
    # connect to 'https://huggingface.co' to load the files"): the loading frames' arguments do.
    if default not in text and not _loading(error, default):
        return None
    return (
        f"TFT_MODEL is not set, so the config uses {default!r} from the Hugging Face hub, "
        "which could not be loaded; set TFT_MODEL to a local model directory (or a hub name "
        "you can reach), e.g. TFT_MODEL=/path/to/model allennlp ..."
    )


def _loading(error: BaseException, name: str) -> bool:
    """Whether a frame of `error`'s traceback (or its causes') has `name` as a string argument."""
    cause: Optional[BaseException] = error
    for _ in range(10):
        if cause is None:
            return False
        for frame, _ in traceback.walk_tb(cause.__traceback__):
            if any(value == name for value in frame.f_locals.values() if isinstance(value, str)):
                return True
        cause = cause.__cause__ or cause.__context__
    return False


# The variables whose values name the configs' paths, and how to fix each.
PATH_VARIABLES = {
    "GLUE_DIR": "set GLUE_DIR to the GLUE data folder, which holds a folder per task: MRPC/, ...",
    "TFT_MODEL": (
        "set TFT_MODEL to a Hugging Face checkpoint (a local folder or a hub name) or an "
        "injection archive"
    ),
    "TFT_PARAPHRASE_CORPUS": (
        "set TFT_PARAPHRASE_CORPUS to the aligned corpus that `allennlp tft-align` writes"
    ),
    "TFT_CACHE": "set TFT_CACHE to a folder the plugin may write",
}
# `OSError`s that name a file the user gave (directly, in a config or through a variable), and
# those of a full or read-only disk.
_PATH_ERRORS = (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)
_DISK_ERRORS = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EROFS)


def _user_error_types() -> Tuple[Type[BaseException], ...]:
    from allennlp.common.checks import ConfigurationError

    from tft_allennlp.common.input_problems import MalformedInputError

    # `UntrustedArchiveError`, a refused archive, is a `ConfigurationError`.
    return (ConfigurationError, MalformedInputError)


def _missing_path(error: BaseException) -> Optional[str]:
    """The path that `error` (one of `_PATH_ERRORS` or `_DISK_ERRORS`) names, if it names one."""
    if not isinstance(error, OSError):
        return None
    if not (isinstance(error, _PATH_ERRORS) or error.errno in _DISK_ERRORS):
        return None
    if error.filename is not None:
        return str(error.filename)
    found = re.fullmatch(r"file (.+) not found", str(error))  # AllenNLP's `cached_path`
    return found.group(1) if found else None


def with_variables(message: str) -> str:
    """
    `message`, and where it names a path under the value of one of `PATH_VARIABLES` (or under
    its default, the variable unset) that it does not name, the variable and its fix; not
    where the command line gave the path itself, nor where the message refuses what the path
    holds (it says why, and what to do, itself).
    """
    if ": refused: " in message:
        return message
    for name, fix in PATH_VARIABLES.items():
        value = os.environ.get(name) or CONFIG_DEFAULTS.get(name)
        if not value or name in message or len(value.strip("./")) < 2:
            continue
        spellings = {value, os.path.abspath(value), os.path.realpath(value)}
        if not any(spelling in message for spelling in spellings):
            continue
        given = sys.argv[1:] if in_allennlp_command() else []
        if any(argument.startswith(tuple(spellings)) for argument in given):
            continue
        source = f"from {name}={value}" if name in os.environ else f"{name} is not set: {value!r}"
        return f"{message} ({source}; {fix})"
    # A variable set but empty turns `$GLUE_DIR/MRPC/train.tsv` into `/MRPC/train.tsv`.
    for name, fix in PATH_VARIABLES.items():
        if message.startswith("/") and name in os.environ and not os.environ[name].strip():
            return f"{message} ({name} is set, and empty; {fix})"
    return message


def _interruption(error: BaseException) -> Optional[str]:
    """
    The line for a command stopped by Ctrl-C or SIGTERM (AllenNLP's `SigTermReceived`), with
    what the command was doing if the error carries a note of it; None for any other error.
    """
    if isinstance(error, KeyboardInterrupt):
        signal_name = "Ctrl-C (SIGINT)"
    elif type(error).__name__ == "SigTermReceived":
        signal_name = "SIGTERM"
    else:
        return None
    notes = getattr(error, "__notes__", None) or []
    return f"stopped by {signal_name}" + (f": {notes[-1]}" if notes else "")


def user_error(error: BaseException) -> Optional[str]:
    """
    The one line that says what is wrong, for an error in the user's input, config,
    environment or files, or for a command stopped by a signal: `model_hint`'s case,
    `_interruption`'s, a `ConfigurationError` (a refused archive too), a
    `MalformedInputError`, a missing or unreadable path; with the variable that the
    path came from (`with_variables`). None for anything else: a bug, which keeps its
    traceback.
    """
    hint = model_hint(error)
    if hint is not None:
        return hint
    interruption = _interruption(error)
    if interruption is not None:
        return interruption
    path = _missing_path(error)
    if path is not None:
        reason = getattr(error, "strerror", None) or "No such file or directory"
        message = f"{path}: {reason}"
    elif isinstance(error, _user_error_types()):
        message = str(error)
    else:
        return None
    return with_variables(" ".join(message.split("\n")).strip())


def keep_traceback(
    error: BaseException, traceback_: Optional[TracebackType], line: str
) -> Optional[str]:
    """
    Writes `error`'s traceback to the run's log (the log files of the root logger: a
    training's `out.log`), or where there is none to a new temporary log; the log's path (None
    if it could not be written).
    """
    files = [h for h in logging.getLogger().handlers if isinstance(h, logging.FileHandler)]
    if files:
        record = logger.makeRecord(
            logger.name,
            logging.ERROR,
            __file__,
            0,
            "The command stopped: %s",
            (line,),
            (type(error), error, traceback_),
        )
        # A log on a full disk: no "--- Logging error ---" traceback on the terminal.
        raise_exceptions, logging.raiseExceptions = logging.raiseExceptions, False
        try:
            for handler in files:
                handler.handle(record)
        finally:
            logging.raiseExceptions = raise_exceptions
        path = files[0].baseFilename
    else:
        try:
            handle, path = tempfile.mkstemp(prefix="allennlp-error-", suffix=".log")
            with os.fdopen(handle, "w") as stream:
                stream.write(f"allennlp {' '.join(sys.argv[1:])}\n{line}\n\n")
                stream.write("".join(traceback.format_exception(type(error), error, traceback_)))
        except OSError:
            return None
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else path


def stopped(command: str, error: BaseException, message: Optional[str] = None) -> str:
    """
    The one line that ends a plugin command (`sys.exit(stopped("tft-export", error))`) on the
    user error `error`: `message` (default: `error`'s), with the variable a path came from; in
    the `allennlp` command, the traceback is kept in a log that the line names (and shown
    with `TFT_VERBOSE=1`).
    """
    line = f"{command}: {with_variables(message if message is not None else str(error))}"
    if not in_allennlp_command():
        return line
    if verbose():
        traceback.print_exception(type(error), error, error.__traceback__)
    where = keep_traceback(error, error.__traceback__, line)
    return line if where is None else f"{line} (traceback: {where})"
