from tft_allennlp.training import (
    callbacks,
    checkpointers,
    learning_rate_schedulers,
    metrics,
    optimizers,
    process_group,
    trainers,
)
