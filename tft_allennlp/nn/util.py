"""
Loss reduction that makes distributed training take the steps of one process.
"""

from typing import Optional

import torch
import torch.distributed as dist
from allennlp.common.util import is_distributed
from allennlp.nn.util import dist_reduce_sum


def mean_loss(losses: torch.Tensor, anchor: torch.Tensor, training: bool) -> Optional[torch.Tensor]:
    """
    The mean of `losses` (one value per example, pair or other unit, already masked), as the
    mean over the whole distributed batch.

    In distributed training each worker divides its sum by the mean number of examples per
    worker, so that DDP's average of the workers' gradients is the gradient of the mean over
    the union of their batches, as in a single process, also when the workers' batches differ in
    size or one of them is an empty padding batch of `tft_streaming`. `anchor` (any output of
    the model, e.g. the logits) is added with weight zero so that the loss of an empty batch is
    still connected to every parameter, which DDP's backward needs.

    Returns `None` for an empty batch outside training, so that the trainer does not count a
    padding batch in the validation loss; otherwise a scalar (zero for an empty batch).
    """
    if losses.numel() == 0 and not training:
        return None
    # Shape: ()
    total = losses.sum() + anchor.sum() * 0.0
    count = torch.tensor(float(losses.numel()), device=losses.device)
    if training and is_distributed():
        count = dist_reduce_sum(count).to(losses.device) / dist.get_world_size()
    return total / count.clamp(min=1.0)
