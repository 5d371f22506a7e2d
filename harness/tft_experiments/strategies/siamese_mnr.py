from tft_experiments.strategies.fine_tuning_strategy import FineTuningStrategy
from tft_experiments.strategies.siamese import SiameseStrategy


@FineTuningStrategy.register("siamese_mnr")
class SiameseMnr(SiameseStrategy):
    """
    The multiple negatives ranking loss (`siamese/mrpc_mnr.jsonnet`) on the paraphrase tasks
    with a positive class, MRPC and QQP.

    Registered as a `FineTuningStrategy` with name "siamese_mnr".
    """

    objective_config = "mrpc_mnr"
    tasks = ("mrpc", "qqp")
