from typing import Sequence

from tft_experiments.strategies.fine_tuning_strategy import (
    FineTuningStrategy,
    JsonnetCall,
    glue_config,
)


@FineTuningStrategy.register("smart")
class Smart(FineTuningStrategy):
    """
    The task's cross-encoder with SMART's adversarial and proximal terms, lambda_s = mu = 1
    (`common/smart.libsonnet`), at the recipe's lr.

    Registered as a `FineTuningStrategy` with name "smart".
    """

    def config(self, tasks: Sequence[str]) -> JsonnetCall:
        (task,) = tasks
        return JsonnetCall("smart", [glue_config(task)])
