import logging
import os
from typing import TYPE_CHECKING, Dict

import torch
from allennlp.training.callbacks.callback import TrainerCallback

from tft_allennlp.common.atomic_files import write_json_atomically

if TYPE_CHECKING:  # for annotations only
    from allennlp.training import GradientDescentTrainer

logger = logging.getLogger(__name__)

# Written to the serialization directory.
PARAMETER_COUNTS = "parameter_counts.json"


def parameter_counts(model: torch.nn.Module) -> Dict[str, int]:
    """
    `trainable` and `frozen` parameters of `model`, each shared parameter (a shared adapter)
    counted once, and their sum `total`.
    """
    trainable = frozen = 0
    for parameter in model.parameters():  # unique parameters
        if parameter.requires_grad:
            trainable += parameter.numel()
        else:
            frozen += parameter.numel()
    return {"trainable": trainable, "frozen": frozen, "total": trainable + frozen}


@TrainerCallback.register("tft_parameter_counts")
class ParameterCounts(TrainerCallback):
    """
    Logs how many of the model's parameters are trained and how many frozen when training
    starts, and writes them to `parameter_counts.json` in the serialization directory (the
    experiment report's trainable-parameter column). AllenNLP itself logs only the number
    given to the optimizer.

    Registered as a `TrainerCallback` with name "tft_parameter_counts".

    # Parameters

    serialization_dir : `str`
        Supplied by the trainer.
    """

    def on_start(
        self, trainer: "GradientDescentTrainer", is_primary: bool = True, **kwargs
    ) -> None:
        counts = parameter_counts(trainer.model)
        logger.info(
            "Parameters: %d trainable (%.2f%%), %d frozen, %d in all.",
            counts["trainable"],
            100.0 * counts["trainable"] / max(counts["total"], 1),
            counts["frozen"],
            counts["total"],
        )
        if is_primary:
            write_json_atomically(os.path.join(self.serialization_dir, PARAMETER_COUNTS), counts)
