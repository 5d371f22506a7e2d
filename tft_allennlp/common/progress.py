"""
Progress bars that fit the terminal, in the `allennlp` command with the plugin loaded: every
bar of AllenNLP's `allennlp.common.tqdm.Tqdm` (training, validation, vocabulary, evaluation)
and the plugin's own (`tft-align`, `tft-show`).

- On a terminal (stderr), a bar is at most one column narrower than the terminal, measured at
  each redraw, so that its carriage-return updates never wrap and leave rows behind.
- A bar shows nothing before its first item: one that never gets any (AllenNLP's
  `building vocab: 0it` for a vocabulary read from a transformer) leaves no line.
- A training or validation bar carries the loss and the run's main metric (the first of its
  `validation_metric`s), abbreviated: `loss 0.693, acc 0.600`; the epoch's whole metrics table
  follows the epoch (AllenNLP's console logger).
- A log record written to the terminal while a bar is open clears the bar's line first and
  redraws the bar below it: no message lands on a bar's line.
- Through a pipe or into a file (stderr not a terminal, or `--file-friendly-logging`), a bar
  prints whole lines and no carriage returns: its last state when it closes (a line per
  training and per validation), and before that a line every `PIPED_INTERVAL_S` seconds.

`tft_host_patches/progress.py` puts these bars in place of AllenNLP's.
"""

import contextlib
import logging
import math
import os
import sys
from typing import Any, Dict, Iterable, Iterator, List, Optional, TextIO

from tqdm import tqdm

# Through a pipe, a long bar prints a line this often (and its last state when it closes).
PIPED_INTERVAL_S = 60.0
# On a terminal, as AllenNLP's bars (`Tqdm.tqdm`); with `--file-friendly-logging`, its interval.
TERMINAL_INTERVAL_S = 0.1
FILE_FRIENDLY_INTERVAL_S = 2.0
# Words of metric names as a bar shows them: `phrase_accuracy` is `phrase_acc`.
SHORT_WORDS = {"accuracy": "acc", "combined_score": "combined", "average": "avg"}

# The metrics of the training that runs in this process: its `validation_metric`s.
_main_metrics: List[str] = []


def _file_friendly() -> bool:
    from allennlp.common import logging as common_logging

    return bool(common_logging.FILE_FRIENDLY_LOGGING)


def terminal_columns() -> Optional[int]:
    """The width of the terminal that stderr is, or None when it is none."""
    try:
        if not sys.stderr.isatty():
            return None
        return os.get_terminal_size(sys.stderr.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return None


class FittedBar(tqdm):
    """
    A tqdm bar as this module describes: as wide as the terminal at most, nothing before its
    first item, whole lines through a pipe. Takes tqdm's arguments; the file defaults to
    AllenNLP's (`TqdmToLogsWriter`: stderr, and a line in the run's log every 10 seconds).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from allennlp.common.tqdm import TqdmToLogsWriter

        # Set before tqdm's own `__init__`, which draws the bar (`display`).
        self._terminal = terminal_columns() is not None and not _file_friendly()
        self._shown = False
        self._closing = False
        if self._terminal:
            interval = TERMINAL_INTERVAL_S
        else:
            interval = FILE_FRIENDLY_INTERVAL_S if _file_friendly() else PIPED_INTERVAL_S
        kwargs.setdefault("file", TqdmToLogsWriter())
        kwargs.setdefault("mininterval", interval)
        super().__init__(*args, **kwargs)

    @property
    def format_dict(self) -> Dict[str, Any]:
        values = super().format_dict
        columns = terminal_columns() if self._terminal else None
        if columns:
            # A column to spare: a terminal that wraps on the last column would add a row.
            width = max(columns - 1, 10)
            values["ncols"] = width if values["ncols"] is None else min(values["ncols"], width)
        return values

    def display(self, msg: Optional[str] = None, pos: Optional[int] = None) -> bool:
        if msg is None and not self._shown and not self.n:
            return True  # nothing to show before the first item
        if msg is None:
            self._shown = True
        if self._terminal:
            return bool(super().display(msg, pos))
        if msg is None:  # whole lines; when closing, `close` ends the line
            self.fp.write(self.__str__() + ("" if self._closing else "\n"))
            self.fp.flush()
        return True

    def clear(self, nolock: bool = False) -> None:
        if self._terminal and self._shown:
            super().clear(nolock)

    def close(self) -> None:
        if not getattr(self, "disable", True):
            self._closing = True
            if not self._shown and not self.n:
                # Never shown and no item: tqdm's own test for a bar that has nothing to clear.
                self.delay = math.inf
        super().close()


def open_terminal_bars() -> List[FittedBar]:
    """The bars drawn on the terminal and still open."""
    return [
        bar
        for bar in list(getattr(tqdm, "_instances", []))
        if isinstance(bar, FittedBar) and bar._terminal and bar._shown and not bar.disable
    ]


@contextlib.contextmanager
def bars_cleared() -> Iterator[None]:
    """Clears the open bars' lines on the terminal, and draws them again afterwards."""
    bars = open_terminal_bars()
    for bar in bars:
        bar.clear()
    try:
        yield
    finally:
        for bar in bars:
            bar.refresh()


class BarSafeStream:
    """A terminal stream (of a log handler) whose text never lands on an open bar's line."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        if not open_terminal_bars():
            return self.stream.write(text)
        with bars_cleared():
            written = self.stream.write(text)
            self.stream.flush()
        return written

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def fit_handlers(root: Optional[logging.Logger] = None) -> None:
    """Gives the root logger's terminal handlers a `BarSafeStream`."""
    root = root or logging.getLogger()
    for handler in root.handlers:
        if (
            isinstance(handler, logging.StreamHandler)
            and not isinstance(handler, logging.FileHandler)
            and not isinstance(handler.stream, BarSafeStream)
        ):
            handler.setStream(BarSafeStream(handler.stream))  # type: ignore[arg-type]


def short_name(metric: str) -> str:
    """`metric` as a bar shows it (`SHORT_WORDS`)."""
    for word, short in SHORT_WORDS.items():
        metric = metric.replace(word, short)
    return metric


def bar_description(metrics: Dict[str, float]) -> str:
    """A training or validation bar's description: the loss, then the run's main metric."""
    names = ["loss"] + [name for name in _main_metrics[:1] if name != "loss"]
    return ", ".join(f"{short_name(name)} {metrics[name]:.3f}" for name in names if name in metrics)


@contextlib.contextmanager
def main_metrics(names: Iterable[str]) -> Iterator[None]:
    """While open, the training and validation bars carry the first of `names` beside the loss
    (`bar_description`): the run's main metric."""
    _main_metrics[:] = list(names)
    try:
        yield
    finally:
        _main_metrics.clear()
