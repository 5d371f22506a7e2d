import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.training.learning_rate_schedulers import LearningRateScheduler


def build(warmup_fraction, num_epochs=2, num_steps_per_epoch=10):
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    scheduler = LearningRateScheduler.from_params(
        Params({"type": "tft_linear_with_warmup_fraction", "warmup_fraction": warmup_fraction}),
        optimizer=optimizer,
        num_epochs=num_epochs,
        num_steps_per_epoch=num_steps_per_epoch,
    )
    return optimizer, scheduler


def test_warmup_then_linear_decay():
    # 20 steps, 10% warmup = 2 steps: lr 0, 0.5, then 1 decaying to 0 over the remaining 18.
    optimizer, scheduler = build(0.1)
    rates = []
    for step in range(21):
        scheduler.step_batch(step)
        rates.append(optimizer.param_groups[0]["lr"])
    assert rates[:3] == pytest.approx([0.0, 0.5, 1.0])
    assert rates[11] == pytest.approx(9 / 18)
    assert rates[20] == 0.0


def test_warmup_steps_round_up():
    _, scheduler = build(0.25, num_epochs=1, num_steps_per_epoch=3)
    assert scheduler.warmup_steps == 1


def test_fraction_must_be_below_one():
    with pytest.raises(ConfigurationError, match="warmup_fraction"):
        build(1.0)
