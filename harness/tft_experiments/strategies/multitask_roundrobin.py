from tft_experiments.strategies.fine_tuning_strategy import FineTuningStrategy
from tft_experiments.strategies.multitask import MultitaskStrategy


@FineTuningStrategy.register("multitask_roundrobin")
class MultitaskRoundrobin(MultitaskStrategy):
    """
    All the grid's tasks in one run, with the scheduler `homogeneous_roundrobin`: AllenNLP's, one
    batch of each task in turn.

    Registered as a `FineTuningStrategy` with name "multitask_roundrobin".
    """

    scheduler = "homogeneous_roundrobin"
