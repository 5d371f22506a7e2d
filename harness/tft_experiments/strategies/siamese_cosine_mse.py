from tft_experiments.strategies.fine_tuning_strategy import FineTuningStrategy
from tft_experiments.strategies.siamese import SiameseStrategy


@FineTuningStrategy.register("siamese_cosine_mse")
class SiameseCosineMse(SiameseStrategy):
    """
    Sentence-BERT's STS-B objective, the cosine regressed on the score
    (`siamese/stsb_cosine.jsonnet`), on STS-B.

    Registered as a `FineTuningStrategy` with name "siamese_cosine_mse".
    """

    objective_config = "stsb_cosine"
    tasks = ("stsb",)
