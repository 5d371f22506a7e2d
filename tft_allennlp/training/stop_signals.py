"""
A SIGTERM (a scheduler preempting the job, `kill PID`) or a Ctrl-C stops `allennlp train` at
the end of the batch in training, with a checkpoint there, so that `--recover` loses nothing.

AllenNLP 2.10 stops at once: everything trained since the last checkpoint is lost (up to
`save_every_num_seconds`, half an hour in the injection grids), and it archives the best epoch
so far as if the run had ended. With the plugin loaded and the `tft_atomic` checkpointer (every
config of the plugin), `allennlp train` holds the first such signal until the
trainer can act on it: the batch in training ends, the checkpointer saves a checkpoint at it,
and the run stops with exit status 128 + the signal's number (143 for SIGTERM, 130 for Ctrl-C),
archiving nothing. A signal while the data is read or the model built waits for the first
batch; one during validation stops the run at the end of the epoch, with its checkpoint (with a
moving average, at the next epoch's first batch); one after the last epoch's training, or in an
epoch after which the run stops early, lets the run finish (and exit 0). A second Ctrl-C stops
at once, as AllenNLP does; a second SIGTERM changes nothing (`allennlp tft-experiment` passes the
one it gets on to its runs, which may have had it already; a scheduler follows up with SIGKILL).

A scheduler signals every process of the job, and a Ctrl-C reaches the terminal's whole process
group. So the reader processes of a `tft_streaming` loader with `num_workers` ignore both signals
(the trainer ends them, and on Linux the system does if the trainer is killed:
`tft_allennlp.common.child_processes`), and in distributed training the workers agree on the batch
to stop at (one `all_reduce` of a number per batch): a worker signalled alone stops the others at
the same batch. The launching process of a distributed run passes a signal of its own on to them as
a SIGTERM, waits for them, then exits with their status.

Other checkpointers keep AllenNLP's behaviour. The wrappers of AllenNLP's training that put this
in place are `tft_host_patches/stop_signals.py`; here are the request and the stop.
"""

import contextlib
import logging
import multiprocessing
import os
import signal
import threading
from typing import Any, Dict, Iterator, Optional

import torch
from allennlp.training.trainer import Trainer

from tft_allennlp.common.child_processes import STOP_SIGNALS

logger = logging.getLogger(__name__)

CHECKPOINTER = "tft_atomic"

_listening: Optional["StopRequest"] = None


class StopRequest:
    """
    The first stop signal this process receives, held until the trainer asks for it
    (`requested`). Signal handlers can only be set from the main thread: elsewhere, entering
    it changes nothing.
    """

    def __init__(self) -> None:
        self.signal: Optional[int] = None
        self._previous: Dict[int, Any] = {}

    def __enter__(self) -> "StopRequest":
        if threading.current_thread() is threading.main_thread():
            for number in STOP_SIGNALS:
                self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exception: Any) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, signal.SIG_DFL if handler is None else handler)
        self._previous.clear()

    def _handle(self, number: int, frame: Any) -> None:
        if self.signal is None:
            self.signal = number
            # The workers of a distributed run, when this is their launcher and the signal was
            # its own (reader processes ignore it).
            for child in multiprocessing.active_children():
                if child.pid is not None:
                    os.kill(child.pid, signal.SIGTERM)
        elif number == signal.SIGINT:  # an impatient Ctrl-C: at once
            self.__exit__()
            raise KeyboardInterrupt
        # A SIGTERM after the first signal is the same request again.

    def requested(self, trainer: Trainer) -> Optional[int]:
        """The signal to stop on, the same in every worker of a distributed run, or None."""
        number = self.signal or 0
        if getattr(trainer, "_distributed", False):
            agreed = torch.tensor(number, device=getattr(trainer, "cuda_device"))
            torch.distributed.all_reduce(agreed, torch.distributed.ReduceOp.MAX)
            number = int(agreed.item())
        return number or None


@contextlib.contextmanager
def listening() -> Iterator[StopRequest]:
    """Holds stop signals in this process while open (the request already held, if nested)."""
    global _listening
    if _listening is not None:
        yield _listening
        return
    with StopRequest() as request:
        _listening = request
        try:
            yield request
        finally:
            _listening = None


def stop(trainer: Trainer, number: int, serialization_dir: Optional[str]) -> None:
    """Ends the run after the checkpoint saved on signal `number`."""
    if getattr(trainer, "_primary", True):
        epochs, batches = (
            getattr(trainer, "_epochs_completed"),
            getattr(trainer, "_batches_in_epoch_completed"),
        )
        logger.warning(
            "%s: stopped %s, with a checkpoint there; "
            "`allennlp train CONFIG -s %s --recover` goes on from it.",
            signal.Signals(number).name,
            f"at epoch {epochs}, batch {batches}" if batches else f"after epoch {epochs - 1}",
            serialization_dir,
        )
    if getattr(trainer, "_distributed", False):
        # No worker exits before the primary's checkpoint is complete: the launcher ends the
        # others as soon as one exits.
        torch.distributed.barrier()
    raise SystemExit(128 + number)
