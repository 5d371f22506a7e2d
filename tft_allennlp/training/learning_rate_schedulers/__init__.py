from tft_allennlp.training.learning_rate_schedulers.linear_with_warmup_fraction import (
    LinearWithWarmupFraction,
)
