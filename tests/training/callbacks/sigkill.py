"""
A trainer callback for the recovery tests: it kills its own process with SIGKILL, as an
out-of-memory killer or a preempted machine would, the first time training reaches a given
batch. A marker file in the serialization directory makes the `--recover` run go past that batch.
"""

import os
import signal

from allennlp.training.callbacks.callback import TrainerCallback

MARKER = "sigkill.done"


@TrainerCallback.register("test_sigkill")
class SigkillCallback(TrainerCallback):
    def __init__(self, serialization_dir: str, epoch: int, batch: int) -> None:
        super().__init__(serialization_dir)
        self._epoch = epoch
        self._batch = batch

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
        marker = os.path.join(self.serialization_dir, MARKER)
        if (
            is_training
            and (epoch, batch_number) == (self._epoch, self._batch)
            and not os.path.exists(marker)
        ):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
