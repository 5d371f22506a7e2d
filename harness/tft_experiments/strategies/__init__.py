"""
The fine-tuning strategies of an experiment grid, one registered `FineTuningStrategy` per file;
importing this package registers them all.
"""

from tft_experiments.strategies import (  # noqa: F401
    adapters_houlsby,
    adapters_not_shared,
    adapters_three_shared,
    cross,
    lora,
    multitask_roundrobin,
    multitask_sequential,
    multitask_shuffled,
    siamese_cosine_embedding,
    siamese_cosine_mse,
    siamese_mnr,
    siamese_softmax,
    smart,
)
from tft_experiments.strategies.fine_tuning_strategy import FineTuningStrategy
