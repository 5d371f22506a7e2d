from tft_experiments.strategies.adapters import AdaptersStrategy
from tft_experiments.strategies.fine_tuning_strategy import FineTuningStrategy


@FineTuningStrategy.register("adapters_three_shared")
class AdaptersThreeShared(AdaptersStrategy):
    """
    Bottleneck adapters, variant `three_shared`: one adapter for three consecutive layers.

    Registered as a `FineTuningStrategy` with name "adapters_three_shared".
    """

    variant = "three_shared"
