"""
BERT's initialisation of the classification layers a model puts on top of the encoder.
"""

import re

from allennlp.nn import InitializerApplicator
from allennlp.nn.initializers import NormalInitializer, ZeroInitializer


def classifier_initializer(*layers: str) -> InitializerApplicator:
    """
    An `InitializerApplicator` for the `torch.nn.Linear` modules named `layers`: weights from a
    normal distribution with standard deviation 0.02 and zero biases, as BERT initialises its
    classifiers.
    """
    names = "|".join(re.escape(layer) for layer in layers)
    return InitializerApplicator(
        [
            (rf"^({names})\.weight$", NormalInitializer(mean=0.0, std=0.02)),
            (rf"^({names})\.bias$", ZeroInitializer()),
        ]
    )
