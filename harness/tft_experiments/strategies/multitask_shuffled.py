from tft_experiments.strategies.fine_tuning_strategy import FineTuningStrategy
from tft_experiments.strategies.multitask import MultitaskStrategy


@FineTuningStrategy.register("multitask_shuffled")
class MultitaskShuffled(MultitaskStrategy):
    """
    All the grid's tasks in one run, with the scheduler `tft_shuffled`: all batches in a random
    order (seeded).

    Registered as a `FineTuningStrategy` with name "multitask_shuffled".
    """

    scheduler = "tft_shuffled"
