from tft_experiments.strategies.fine_tuning_strategy import FineTuningStrategy
from tft_experiments.strategies.siamese import SiameseStrategy


@FineTuningStrategy.register("siamese_softmax")
class SiameseSoftmax(SiameseStrategy):
    """
    Sentence-BERT's classification objective (`siamese/mrpc_softmax.jsonnet`) on every pair
    task; for STS-B, MSE on the score.

    Registered as a `FineTuningStrategy` with name "siamese_softmax".
    """

    objective_config = "mrpc_softmax"
