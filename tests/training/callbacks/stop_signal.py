"""
A trainer callback for the stop-signal tests: in the worker of rank `rank` only, when training
reaches batch `batch` of epoch `epoch`, it sends SIGTERM to itself, once (a marker file in the
serialization directory makes the `--recover` run go past that moment).
"""

import os
import signal

import torch.distributed as dist
from allennlp.training.callbacks.callback import TrainerCallback

MARKER = "stop_signal.done"


@TrainerCallback.register("test_stop_signal")
class StopSignalCallback(TrainerCallback):
    def __init__(self, serialization_dir: str, epoch: int, batch: int, rank: int = 0) -> None:
        super().__init__(serialization_dir)
        self._moment = (epoch, batch, rank)
        self._marker = os.path.join(serialization_dir, MARKER)

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
        if not is_training or (epoch, batch_number, rank) != self._moment:
            return
        if os.path.exists(self._marker):
            return
        open(self._marker, "w").close()
        os.kill(os.getpid(), signal.SIGTERM)
