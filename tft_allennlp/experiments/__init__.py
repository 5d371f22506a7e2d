from tft_allennlp.experiments.outcomes import collect_results, tuned_choices
from tft_allennlp.experiments.runner import ExperimentRunner
from tft_allennlp.experiments.spec import ExperimentSpec
