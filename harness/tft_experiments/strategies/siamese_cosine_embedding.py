from tft_experiments.strategies.fine_tuning_strategy import FineTuningStrategy
from tft_experiments.strategies.siamese import SiameseStrategy


@FineTuningStrategy.register("siamese_cosine_embedding")
class SiameseCosineEmbedding(SiameseStrategy):
    """
    The cosine embedding loss (`siamese/mrpc_cosine_embedding.jsonnet`) on the paraphrase tasks
    with a positive class, MRPC and QQP.

    Registered as a `FineTuningStrategy` with name "siamese_cosine_embedding".
    """

    objective_config = "mrpc_cosine_embedding"
    tasks = ("mrpc", "qqp")
