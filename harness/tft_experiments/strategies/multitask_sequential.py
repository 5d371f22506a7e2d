from tft_experiments.strategies.fine_tuning_strategy import FineTuningStrategy
from tft_experiments.strategies.multitask import MultitaskStrategy


@FineTuningStrategy.register("multitask_sequential")
class MultitaskSequential(MultitaskStrategy):
    """
    All the grid's tasks in one run, with the scheduler `tft_sequential`: all batches of one task,
    then the next.

    Registered as a `FineTuningStrategy` with name "multitask_sequential".
    """

    scheduler = "tft_sequential"
