from tft_experiments.strategies.adapters import AdaptersStrategy
from tft_experiments.strategies.fine_tuning_strategy import FineTuningStrategy


@FineTuningStrategy.register("adapters_houlsby")
class AdaptersHoulsby(AdaptersStrategy):
    """
    Bottleneck adapters, variant `houlsby`: one adapter per layer, used after both sublayers.

    Registered as a `FineTuningStrategy` with name "adapters_houlsby".
    """

    variant = "houlsby"
