from typing import Any, Dict, Sequence

from tft_experiments.strategies.fine_tuning_strategy import (
    FineTuningStrategy,
    JsonnetCall,
    glue_config,
)


class AdaptersStrategy(FineTuningStrategy):
    """
    Mohebbi & Rajaee's bottleneck adapters on a frozen encoder: `common/adapters.libsonnet`
    around the task's cross-encoder config, with the adapters `variant`, at their lr 3e-4
    whatever the recipe's (the sweep tunes full fine-tuning, not them).
    """

    variant = ""
    """The `variant` argument of `common/adapters.libsonnet`."""

    def config(self, tasks: Sequence[str]) -> JsonnetCall:
        (task,) = tasks
        return JsonnetCall("adapters", [glue_config(task)], {"variant": self.variant})

    def overrides(self) -> Dict[str, Any]:
        return {"trainer.optimizer.lr": 3e-4}
