from tft_experiments.strategies.adapters import AdaptersStrategy
from tft_experiments.strategies.fine_tuning_strategy import FineTuningStrategy


@FineTuningStrategy.register("adapters_not_shared")
class AdaptersNotShared(AdaptersStrategy):
    """
    Bottleneck adapters, variant `not_shared`: two adapters per layer, and the layers' layer norms
    trained too.

    Registered as a `FineTuningStrategy` with name "adapters_not_shared".
    """

    variant = "not_shared"
