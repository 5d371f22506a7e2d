"""
A SIGTERM (a scheduler preempting the job, `kill PID`) or a Ctrl-C stops `allennlp train` at
the end of the batch in training, with a checkpoint there, so that `--recover` loses nothing.

AllenNLP 2.10 stops at once: everything trained since the last checkpoint is lost (up to
`save_every_num_seconds`, half an hour in the injection grids), and it archives the best epoch
so far as if the run had ended. With the plugin loaded and the `tft_atomic` checkpointer (every
config of the plugin), `install()` makes `allennlp train` hold the first such signal until the
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

Other checkpointers keep AllenNLP's behaviour.
"""

import contextlib
import logging
import multiprocessing
import os
import signal
import sys
import threading
from typing import Any, Callable, Dict, Iterator, Optional

import allennlp.commands.train as train_command
import torch
from allennlp.common import Params
from allennlp.training.gradient_descent_trainer import GradientDescentTrainer
from allennlp.training.trainer import Trainer
from torch.multiprocessing import ProcessExitedException

from tft_allennlp.common.child_processes import STOP_SIGNALS
from tft_host_patches import replace

logger = logging.getLogger(__name__)

PATCH = "stop_signals"

CHECKPOINTER = "tft_atomic"

_original: Dict[str, Callable[..., Any]] = {}
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


def install() -> None:
    """
    Makes `allennlp train` and `GradientDescentTrainer.train` hold stop signals, and the workers
    of distributed training end as `_train_worker` says (once).
    """
    if _original:
        return
    _original.update(
        train=GradientDescentTrainer.train,
        train_model=train_command.train_model,
        train_worker=getattr(train_command, "_train_worker"),
    )
    replace(GradientDescentTrainer, "train", _train, patch=PATCH)
    replace(train_command, "train_model", _train_model, patch=PATCH)
    replace(train_command, "_train_worker", _train_worker, patch=PATCH)


def _train_model(params: Params, *args: Any, **kwargs: Any) -> Any:
    trainer = params.as_dict(quiet=True).get("trainer") or {}
    if (trainer.get("checkpointer") or {}).get("type") != CHECKPOINTER:
        return _original["train_model"](params, *args, **kwargs)
    try:
        with listening():
            return _original["train_model"](params, *args, **kwargs)
    except ProcessExitedException as error:
        if error.exit_code - 128 not in STOP_SIGNALS:
            raise
        # The workers logged where they stopped; a traceback of the launcher would add nothing.
        raise SystemExit(error.exit_code) from None


def _train(self: GradientDescentTrainer) -> Any:
    # The checkpointer acts on the request `_train_model` holds, or, in the worker processes of
    # distributed training (which `_train_model` does not run in), on one held from here.
    checkpointer: Any = getattr(self, "_checkpointer", None)
    if not hasattr(checkpointer, "stop_request"):
        return _original["train"](self)
    with listening() as request:
        checkpointer.stop_request = request
        try:
            return _original["train"](self)
        finally:
            checkpointer.stop_request = None


def _train_worker(*args: Any, **kwargs: Any) -> Any:
    """
    AllenNLP's `_train_worker`; a worker of distributed training that stops on a signal ends
    here, once every `finally` of the trainer and its callbacks has run, with its logs flushed
    and without the interpreter's teardown. That teardown frees the trainer, whose DDP reducer
    holds the process group past `process_group`'s exit handler, and gloo's threads, torn down
    with it, now and then aborted the worker ("terminate called without an active exception",
    SIGABRT): the launcher then reported a failure instead of the stop.
    """
    try:
        return _original["train_worker"](*args, **kwargs)
    except SystemExit as error:
        status = error.code if isinstance(error.code, int) else 0
        if status - 128 not in STOP_SIGNALS or not torch.distributed.is_initialized():
            raise
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(status)


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
