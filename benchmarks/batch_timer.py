"""
`benchmark_batch_timer`, a trainer callback for `train_run_benchmark.py` (loaded with
`--include-package batch_timer`): the time of each training batch as the trainer runs it, its
wordpieces, and the device's peak memory, written to `path` as JSON after the last timed batch;
then the process ends at once (exit status 0), so that the end-of-run checkpoint and archive,
which are not what is measured, take no time.
"""

import json
import os
import time
from typing import Any, Dict, List

import torch
from allennlp.training.callbacks import TrainerCallback
from transformers import PreTrainedModel


@TrainerCallback.register("benchmark_batch_timer")
class BatchTimer(TrainerCallback):
    """
    # Parameters

    serialization_dir : `str`
    path : `str`
        Where the JSON goes.
    batches : `int`
        Timed batches: the run ends after `warmup + batches` training batches.
    warmup : `int`
        Batches before the timing starts (at least 1: the clock starts at the end of the
        `warmup`-th batch).
    """

    def __init__(self, serialization_dir: str, path: str, batches: int, warmup: int) -> None:
        super().__init__(serialization_dir)
        assert warmup >= 1, "the clock starts at the end of a batch"
        self.path, self.batches, self.warmup = path, batches, warmup
        self.times: List[float] = []
        self.tokens: List[int] = []
        self.lengths: List[int] = []

    def _now(self) -> float:
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        return time.perf_counter()

    def on_start(self, trainer: Any, is_primary: bool = True, **kwargs: Any) -> None:
        super().on_start(trainer, is_primary, **kwargs)
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()

    def on_batch(  # type: ignore[override]
        self,
        trainer: Any,
        batch_inputs: List[Dict[str, Any]],
        batch_outputs: Any,
        batch_metrics: Any,
        epoch: int,
        batch_number: int,
        is_training: bool,
        is_primary: bool = True,
        **kwargs: Any,
    ) -> None:
        if not is_training:
            return
        # The time at the end of each batch; the first `warmup` batches only start the clock.
        self.times.append(self._now())
        mask = batch_inputs[0]["tokens"]["tokens"]["mask"]
        self.tokens.append(int(mask.sum()))
        self.lengths.append(mask.size(1))
        if len(self.times) == self.warmup + self.batches:
            self._write(trainer)
            os._exit(0)

    def _write(self, trainer: Any) -> None:
        model = trainer.model
        encoder = next(m for m in model.modules() if isinstance(m, PreTrainedModel))
        config = encoder.config
        first = self.warmup - 1
        record = {
            "seconds": self.times[-1] - self.times[first],
            # Batch k's time runs from the end of batch k - 1 to its own end.
            "batch_seconds": [b - a for a, b in zip(self.times[first:], self.times[first + 1 :])],
            "tokens": self.tokens[first + 1 :],
            "lengths": self.lengths[first + 1 :],
            "parameters": sum(p.numel() for p in model.parameters()),
            "layers": config.num_hidden_layers,
            "hidden": config.hidden_size,
            "max_memory_allocated": (
                torch.cuda.max_memory_allocated() if torch.cuda.is_available() else None
            ),
        }
        with open(self.path, "w", encoding="utf-8") as handle:
            json.dump(record, handle)
