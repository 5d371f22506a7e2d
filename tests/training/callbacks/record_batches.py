"""
A trainer callback for the tests that count what distributed training really sees: after every
batch it appends one JSON line per worker with the epoch, whether it was training, the ids of the
batch's instances (empty for a padding batch) and the data loader's length.
"""

import json
import os

import torch.distributed as dist
from allennlp.training.callbacks.callback import TrainerCallback


def instance_id(metadata):
    """GLUE rows by line; injection instances by line and random partner (0: paraphrase)."""
    return [metadata["line_number"], metadata.get("partner_line_number", 0)]


@TrainerCallback.register("test_record_batches")
class RecordBatches(TrainerCallback):
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
        loader = trainer.data_loader if is_training else trainer._validation_data_loader
        record = {
            "epoch": epoch,
            "training": is_training,
            "ids": [instance_id(m) for batch in batch_inputs for m in batch["metadata"]],
            "loader_length": len(loader),
        }
        with open(os.path.join(self.serialization_dir, f"batches_rank{rank}.jsonl"), "a") as out:
            out.write(json.dumps(record) + "\n")
