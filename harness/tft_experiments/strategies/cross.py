from tft_experiments.strategies.fine_tuning_strategy import FineTuningStrategy

CROSS = "cross"


@FineTuningStrategy.register(CROSS)
class Cross(FineTuningStrategy):
    """
    The cross-encoder of `training_configs/glue/<task>.jsonnet`, on every task; its runs keep
    the directories they had before there were strategies (no level of their own).

    Registered as a `FineTuningStrategy` with name "cross".
    """

    own_directory_level = False
