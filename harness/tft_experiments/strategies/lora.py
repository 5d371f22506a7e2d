from typing import Any, Dict, Sequence

from tft_experiments.strategies.fine_tuning_strategy import (
    FineTuningStrategy,
    JsonnetCall,
    glue_config,
)


@FineTuningStrategy.register("lora")
class Lora(FineTuningStrategy):
    """
    LoRA through peft on a frozen encoder (`common/lora.libsonnet`: rank 8, alpha 8, the
    attention's query and value projections) around the task's cross-encoder config, at the LoRA
    paper's lr 5e-4 whatever the recipe's (the sweep tunes full fine-tuning, not it).

    Registered as a `FineTuningStrategy` with name "lora".
    """

    def config(self, tasks: Sequence[str]) -> JsonnetCall:
        (task,) = tasks
        return JsonnetCall("lora", [glue_config(task)])

    def overrides(self) -> Dict[str, Any]:
        return {"trainer.optimizer.lr": 5e-4}
