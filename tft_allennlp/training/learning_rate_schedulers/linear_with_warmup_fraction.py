import math

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.training.learning_rate_schedulers import PolynomialDecay
from allennlp.training.learning_rate_schedulers.learning_rate_scheduler import (
    LearningRateScheduler,
)


@LearningRateScheduler.register("tft_linear_with_warmup_fraction")
class LinearWithWarmupFraction(PolynomialDecay):
    """
    Linear warmup from 0 to `lr` over a fraction of all training steps, then linear decay to 0:
    BERT's fine-tuning schedule (`warmup_ratio` in Hugging Face terms).

    AllenNLP's `linear_with_warmup` takes the warmup as a number of steps, which depends on
    the size of the training set; with the paper's subsampled training sets (1k, 5k, ..., all)
    one config has to serve them all, so the warmup is given as a fraction instead.

    Registered as a `LearningRateScheduler` with name "tft_linear_with_warmup_fraction".

    # Parameters

    optimizer : `torch.optim.Optimizer`
        Supplied by the trainer; no config entry.
    num_epochs : `int`
        Supplied by the trainer; no config entry.
    num_steps_per_epoch : `int`
        Supplied by the trainer; no config entry.
    warmup_fraction : `float`, optional (default = `0.1`)
        Share of all steps spent warming up, in `[0, 1)`; the step count is rounded up.
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        num_epochs: int,
        num_steps_per_epoch: int,
        warmup_fraction: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        if not 0.0 <= warmup_fraction < 1.0:
            raise ConfigurationError(f"warmup_fraction must be in [0, 1), got {warmup_fraction}.")
        warmup_steps = math.ceil(warmup_fraction * num_epochs * (num_steps_per_epoch or 0))
        super().__init__(
            optimizer,
            num_epochs,
            num_steps_per_epoch,
            power=1.0,
            warmup_steps=warmup_steps,
            end_learning_rate=0.0,
            last_epoch=last_epoch,
        )
