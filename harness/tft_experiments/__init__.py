"""
tft-experiments: the experiment harness of tft-allennlp, a separate package of the same
repository. It runs grids of injections and fine-tunings resumably (`allennlp tft-experiment
SPEC`), with the fine-tuning strategies users compare injection with, paired statistics and
reports. The plugin (`tft_allennlp`) imports nothing of it; installed, it registers its
subcommand through the plugin's start-up hook (the `tft_allennlp.plugins` entry point).
"""

import tft_allennlp  # noqa: F401  (the plugin's components, which the grids' configs name)
from tft_experiments import commands, strategies
from tft_experiments.outcomes import collect_results, tuned_choices
from tft_experiments.runner import ExperimentRunner
from tft_experiments.spec import ExperimentSpec
