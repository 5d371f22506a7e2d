from tft_allennlp.training import (
    callbacks,
    checkpointers,
    learning_rate_schedulers,
    optimizers,
    trainers,
)
