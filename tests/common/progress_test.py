"""
Progress bars on a terminal of 80 columns (issue 61: a bar line of 138 characters left a row
behind at every update), and through a pipe. What a terminal shows is rendered from the bytes
the command wrote to a pseudo-terminal, by `render`: enough of a terminal for tqdm's output
(characters, carriage returns, newlines, wrapping at the last column).
"""

import fcntl
import io
import logging
import os
import pty
import re
import struct
import sys
import termios
from typing import List

from tests import CONFIGS_ROOT
from tests.allennlp_cli import on_a_terminal as forked_on_a_terminal
from tft_allennlp.common import progress
from tft_allennlp.common.progress import BarSafeStream, FittedBar, bar_description

CSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def render(text: str, columns: int) -> List[str]:
    """The rows that `text` leaves on a terminal `columns` wide (and as tall as it needs)."""
    rows: List[List[str]] = [[]]
    row = column = 0
    for character in CSI.sub("", text):
        if character == "\r":
            column = 0
        elif character == "\n":
            row, column = row + 1, 0
        else:
            if column == columns:  # the cursor waits at the last column; the next one wraps
                row, column = row + 1, 0
            rows.extend([] for _ in range(row + 1 - len(rows)))
            line = rows[row]
            line.extend(" " for _ in range(column + 1 - len(line)))
            line[column] = character
            column += 1
        rows.extend([] for _ in range(row + 1 - len(rows)))
    shown = ["".join(line).rstrip() for line in rows]
    while shown and not shown[-1]:
        shown.pop()
    return shown


def on_a_terminal(argv: List[str], columns: int = 80) -> str:
    """What `allennlp ARGV` (forked, as the program) writes to a terminal `columns` wide."""
    code, shown, _ = forked_on_a_terminal(argv, columns)
    assert code == 0, shown[-3000:]
    return shown


def test_a_run_on_80_columns_leaves_no_rows_behind(tmp_path):
    # 150 batches of one pair: the bar is redrawn many times.
    overrides = (
        '{"trainer.num_epochs": 1, "data_loader.batch_size": 1, '
        '"data_loader.batches_per_epoch": 150, "validation_data_loader.batch_size": 1}'
    )
    argv = ["train", str(CONFIGS_ROOT / "glue/mrpc.jsonnet"), "-s", str(tmp_path / "run")]
    shown = on_a_terminal(argv + ["-o", overrides])
    rows, lines = render(shown, 80), render(shown, 10_000)
    assert all(len(row) <= 80 for row in rows)
    # Only the final metrics' JSON is wider than 80 columns (by nothing, today).
    assert len(rows) <= len(lines) + 5, "\n".join(rows)
    bars = [row for row in rows if "|" in row and "it/s]" in row]
    assert len(bars) == 2, "\n".join(rows)  # training and validation, nothing left behind
    assert all(re.match(r"loss \d\.\d{3}, combined \d\.\d{3}: 100%", bar) for bar in bars), bars
    # No empty bar ("0it", not the rate's "...90it/s").
    assert not [row for row in rows if re.search(r"\b0it\b", row) or "building vocab" in row]


def test_a_message_never_lands_on_a_bar_line(monkeypatch):
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 40, 0, 0))
    stream = open(terminal, "w", buffering=1, closefd=False)
    monkeypatch.setattr(sys, "stderr", stream)
    handler = logging.StreamHandler(BarSafeStream(stream))
    log = logging.getLogger("tests.progress")
    log.addHandler(handler)
    try:
        for _ in FittedBar([], desc="building vocab"):  # empty: no line
            pass
        # A description wider than the terminal: the line is cut, not wrapped.
        for number in FittedBar(range(20), desc="x" * 60, mininterval=0, file=stream):
            if number == 10:
                log.warning("a reader's message")
    finally:
        log.removeHandler(handler)
        stream.close()
    os.close(terminal)
    shown = b""
    while True:
        try:
            block = os.read(controller, 65536)
        except OSError:  # EIO: nothing more
            break
        if not block:
            break
        shown += block
    os.close(controller)
    rows = render(shown.decode(), 40)
    assert len(rows) == 2 and rows[0] == "a reader's message", rows
    assert rows[1] == "x" * 39, rows


def test_through_a_pipe_a_bar_prints_whole_lines():
    written = io.StringIO()
    for _ in FittedBar([], file=written):
        pass
    assert written.getvalue() == ""
    for _ in FittedBar(range(500), desc="loss 0.693", file=written, mininterval=0.0):
        pass
    assert "\r" not in written.getvalue()
    # With no interval, a line per item; by default, a line a minute and the last state.
    assert written.getvalue().splitlines()[-1].startswith("loss 0.693: 100%|")
    written = io.StringIO()
    for _ in FittedBar(range(500), file=written):
        pass
    assert len(written.getvalue().splitlines()) == 1


def test_a_training_bar_carries_the_loss_and_the_main_metric(monkeypatch):
    metrics = {"phrase_accuracy": 0.3421, "sentence_accuracy": 0.5, "loss": 1.8, "batch_loss": 2}
    monkeypatch.setattr(progress, "_main_metrics", ["phrase_accuracy", "loss"])
    assert bar_description(metrics) == "loss 1.800, phrase_acc 0.342"
    monkeypatch.setattr(progress, "_main_metrics", ["loss"])
    assert bar_description(metrics) == "loss 1.800"
