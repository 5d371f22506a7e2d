from typing import Sequence, Tuple

from tft_allennlp.common.glue_tasks import GLUE_TASKS, get_glue_task
from tft_experiments.strategies.fine_tuning_strategy import (
    ConfigImport,
    FineTuningStrategy,
    JsonnetCall,
    glue_config,
)

PAIR_TASKS: Tuple[str, ...] = tuple(name for name, task in GLUE_TASKS.items() if task.is_pair)
"""Every sentence-pair task; the single-sentence tasks (CoLA, SST-2) have no Siamese model."""


class SiameseStrategy(FineTuningStrategy):
    """
    A Siamese (Sentence-BERT) model of the task: `common/siamese_of_glue.libsonnet` on the
    task's cross-encoder config, with the objective of one of the configs of
    `training_configs/siamese/` (`objective_config`), on the tasks of `tasks`.
    """

    objective_config = ""
    """The config in `training_configs/siamese/` whose `model.objective` the model trains."""
    tasks: Tuple[str, ...] = PAIR_TASKS

    def applies_to(self, task: str) -> bool:
        return task in self.tasks

    def config(self, tasks: Sequence[str]) -> JsonnetCall:
        (task,) = tasks
        return JsonnetCall(
            "siamese_of_glue",
            [glue_config(task)],
            {
                "directory": get_glue_task(task).directory,
                "objective_config": ConfigImport(f"siamese/{self.objective_config}.jsonnet"),
            },
        )
