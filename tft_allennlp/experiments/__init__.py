from tft_allennlp.experiments.spec import ExperimentSpec
from tft_allennlp.experiments.runner import ExperimentRunner, collect_results
