"""
A trainer callback for the recovery tests: it kills its own process with SIGKILL, as an
out-of-memory killer or a preempted machine would (or sends it `signal`, e.g. a scheduler's
"SIGTERM"), once, at a chosen moment:

- `at: "batch"`: when training reaches batch `batch` of epoch `epoch` (in distributed training,
  in the worker of rank `rank` only); `at: "validation"`: the same in the epoch's validation;
- `at: "model_state"` or `"training_state"`: half-way through writing that checkpoint file of
  epoch `epoch`, batch `batch` (its first half of the bytes is on disk);
- `at: "archive"`: while `model.tar.gz` is written, after its first member;
- `at: "exit"`: once the run has finished and no longer holds stop signals, as its process
  exits (a scheduler's signal that comes a moment too late).

With `parent: true` it signals its parent process instead (a grid's harness running it). With
`teardown_aborts: true` the process it signals also aborts (SIGABRT) if it reaches the
interpreter's teardown, as a gloo worker's threads now and then made it do after a stop.
A marker file in the serialization directory (`marker`, default `sigkill.done`) makes the
`--recover` run go past that moment; two callbacks with their own markers kill twice.
"""

import atexit
import io
import os
import signal as signal_module
import tarfile
import time

import torch
import torch.distributed as dist
from allennlp.training.callbacks.callback import TrainerCallback

MARKER = "sigkill.done"


@TrainerCallback.register("test_sigkill")
class SigkillCallback(TrainerCallback):
    def __init__(
        self,
        serialization_dir: str,
        epoch: int = 0,
        batch: int = 0,
        at: str = "batch",
        signal: str = "SIGKILL",
        rank: int = 0,
        parent: bool = False,
        teardown_aborts: bool = False,
        marker: str = MARKER,
    ) -> None:
        super().__init__(serialization_dir)
        self._parent = parent
        self._teardown_aborts = teardown_aborts
        self._epoch = epoch
        self._batch = batch
        self._signal = getattr(signal_module, signal)
        self._rank = rank
        self._marker = os.path.join(serialization_dir, marker)
        if at in ("model_state", "training_state"):
            _kill_while_saving(f"{at}_e{epoch}_b{batch}.th", self._kill_once)
        elif at == "archive":
            _kill_while_archiving(self._kill_once)
        elif at not in ("batch", "validation", "exit"):
            raise ValueError(f"unknown moment {at!r}")
        self._at = at

    def _kill_once(self) -> bool:
        if os.path.exists(self._marker):
            return False
        open(self._marker, "w").close()
        if not self._parent:
            if self._teardown_aborts:
                atexit.register(os.abort)
            os.kill(os.getpid(), self._signal)
            return True
        parent = os.getppid()
        os.kill(parent, self._signal)
        # Until the parent is gone: whatever its death makes the system send this process has
        # been sent by then, before the batch ends.
        deadline = time.monotonic() + 60
        while os.getppid() == parent and time.monotonic() < deadline:
            time.sleep(0.01)
        return True

    def on_end(self, trainer, metrics=None, epoch=None, is_primary=True, **kwargs) -> None:
        if self._at == "exit":
            _kill_once_its_handler_is_reset(self._signal, self._kill_once)

    def on_batch(
        self,
        trainer,
        batch_inputs,
        batch_outputs,
        batch_metrics,
        epoch,
        batch_number,
        is_training,
        is_primary=True,
        batch_grad_norm=None,
        **kwargs,
    ) -> None:
        rank = dist.get_rank() if dist.is_initialized() else 0
        moment = (epoch, batch_number, rank)
        at = "batch" if is_training else "validation"
        if self._at == at and moment == (self._epoch, self._batch, self._rank):
            self._kill_once()


def _kill_while_saving(file_name: str, kill) -> None:
    """Makes `torch.save` to a file named like `file_name` write half of it, then kill."""
    save = torch.save

    def half_save(obj, f, *args, **kwargs):
        name = f if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "")
        if file_name not in os.path.basename(str(name)) or os.path.exists(
            os.path.join(os.path.dirname(str(name)), MARKER)
        ):
            return save(obj, f, *args, **kwargs)
        buffer = io.BytesIO()
        save(obj, buffer, *args, **kwargs)
        data = buffer.getvalue()[: len(buffer.getvalue()) // 2]
        if isinstance(f, (str, os.PathLike)):
            with open(f, "wb") as stream:
                stream.write(data)
        else:
            f.write(data)
            f.flush()
        kill()

    torch.save = half_save


def _kill_once_its_handler_is_reset(number: int, kill) -> None:
    """
    Makes the next change of the handler of signal `number` (the trainer is done: that is
    `allennlp train` letting go of the stop signals it held) be followed by a kill.
    """
    set_handler = signal_module.signal

    def set_then_kill(signalnum, handler):
        previous = set_handler(signalnum, handler)
        if signalnum == number:
            signal_module.signal = set_handler
            kill()
        return previous

    signal_module.signal = set_then_kill


def _kill_while_archiving(kill) -> None:
    """Makes the first member added to a `model.tar.gz` be followed by a kill."""
    add = tarfile.TarFile.add

    def add_then_kill(self, *args, **kwargs):
        add(self, *args, **kwargs)
        if "model.tar.gz" in os.path.basename(str(self.name)):
            self.fileobj.flush()
            kill()

    tarfile.TarFile.add = add_then_kill
