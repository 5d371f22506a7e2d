import pytest
import torch
from allennlp.common.testing.distributed_test import run_distributed_test

from tft_allennlp.nn.util import mean_loss


def test_one_process_takes_the_plain_mean():
    losses = torch.tensor([1.0, 2.0, 6.0])
    assert mean_loss(losses, torch.zeros(2), training=True).item() == 3.0
    assert mean_loss(losses, torch.zeros(2), training=False).item() == 3.0


def test_an_empty_batch_has_a_zero_loss_in_training_and_none_in_evaluation():
    anchor = torch.ones(0, 3, requires_grad=True)
    loss = mean_loss(torch.zeros(0), anchor, training=True)
    assert loss.item() == 0.0
    loss.backward()
    assert anchor.grad is not None  # connected to what produced the anchor
    assert mean_loss(torch.zeros(0), anchor, training=False) is None


def _worker(global_rank, world_size, gpu_id, losses_per_worker, expected):
    losses = torch.tensor(losses_per_worker[global_rank])
    loss = mean_loss(losses, torch.zeros(1), training=True)
    assert loss.item() == pytest.approx(expected[global_rank])


def test_workers_divide_by_the_mean_count_so_ddp_averages_to_the_global_mean():
    # Worker 0 has three examples, worker 1 an empty padding batch: the mean count is 1.5, so
    # the workers' losses are 9 / 1.5 = 6 and 0, and DDP's average of them, 3, is the mean of
    # the three real examples, as one process with the union batch would have it.
    run_distributed_test([-1, -1], _worker, [[1.0, 2.0, 6.0], []], [6.0, 0.0])
