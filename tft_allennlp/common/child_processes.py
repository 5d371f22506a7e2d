"""
The stop signals (SIGTERM, and SIGINT from a Ctrl-C) in the processes that a training process
starts: the reader processes of the `tft_streaming` loader, and the runs of a grid. A scheduler
signals every process of a job, and a Ctrl-C reaches the terminal's whole process group, but only
the trainer should act on them (`tft_allennlp.training.stop_signals`): a helper blocks them while
it starts, then ignores them, and ends when its parent does.
"""

import contextlib
import ctypes
import os
import signal
import sys
from typing import Iterator, Optional

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)

# prctl(2) of the C library, bound once here: a child between fork and exec may call no more.
_PR_SET_PDEATHSIG = 1
_prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None


@contextlib.contextmanager
def held_while_helpers_start() -> Iterator[None]:
    """
    Blocks the stop signals while helper processes of training start. A helper inherits them
    blocked, so that one sent to the whole job as it starts waits in it until
    `ignore_stop_signals` discards it, instead of killing it; the caller gets its own on leaving.
    """
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def ignore_stop_signals() -> None:
    """
    For a helper process of training (started `held_while_helpers_start`), which the trainer ends
    when it stops.
    """
    for number in STOP_SIGNALS:
        signal.signal(number, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def parent_death_signal(number: int) -> bool:
    """
    Asks the system to send this process signal `number` when the thread that started it ends
    (Linux's `PR_SET_PDEATHSIG`); whether that took (never elsewhere).
    """
    return _prctl is not None and _prctl(_PR_SET_PDEATHSIG, number, 0, 0, 0) == 0


def end_with_parent(number: int, parent: Optional[int] = None) -> None:
    """
    Asks the system to send this process signal `number` when the thread that started it ends
    (Linux's `PR_SET_PDEATHSIG`; elsewhere nothing), so that a helper does not outlive a parent
    that was killed (SIGKILL, the out-of-memory killer). With `parent`, the id of the process
    expected to have started this one: if it has already gone, the signal comes at once. Safe
    between fork and exec (it calls no more than the C library's `prctl`).
    """
    if _prctl is None:
        return
    parent_death_signal(number)
    if parent is not None and os.getppid() != parent:
        os.kill(os.getpid(), number)
