from typing import Any, Dict, Sequence

from tft_experiments.strategies.fine_tuning_strategy import (
    FineTuningStrategy,
    JsonnetCall,
)


class MultitaskStrategy(FineTuningStrategy):
    """
    One run trains all the grid's tasks at once (`common/multitask.libsonnet`) with the batch
    order of `scheduler`; it is reported once per task.
    """

    trains_all_tasks = True
    scheduler = ""
    """The `scheduler` argument of `common/multitask.libsonnet`."""

    def config(self, tasks: Sequence[str]) -> JsonnetCall:
        return JsonnetCall(
            "multitask", keywords={"tasks": list(tasks), "scheduler": self.scheduler}
        )

    def run_overrides(self, overrides: Dict[str, Any], tasks: Sequence[str]) -> Dict[str, Any]:
        return multitask_overrides(overrides, tasks)


def multitask_overrides(overrides: Dict[str, Any], tasks: Sequence[str]) -> Dict[str, Any]:
    """
    A single-task run's overrides for a multitask config: a reader's keys go to every task's
    reader (`dataset_reader.train_size` -> `dataset_reader.readers.<task>.train_size`), a
    loader's batch size to its scheduler; the other keys are kept.
    """
    translated: Dict[str, Any] = {}
    for key, value in overrides.items():
        section, _, rest = key.partition(".")
        if section in ("dataset_reader", "validation_dataset_reader") and rest:
            for task in tasks:
                translated[f"{section}.readers.{task}.{rest}"] = value
        elif section in ("data_loader", "validation_data_loader") and rest == "batch_size":
            translated[f"{section}.scheduler.batch_size"] = value
        else:
            translated[key] = value
    return translated
