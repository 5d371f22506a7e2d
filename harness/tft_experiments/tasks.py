"""
The tasks an experiment grid may name: the nine GLUE tasks (`GLUE_TASKS`), and the tasks of the
user's own that its spec describes (`ExperimentSpec.custom_tasks`). A grid's tasks are read from
its spec (`ExperimentSpec.task_table`) and handed to what reports them; nothing here is global.
"""

import json
from typing import Any, Dict, Mapping

from allennlp.common.checks import ConfigurationError

from tft_allennlp.common.glue_tasks import GLUE_TASKS
from tft_allennlp.common.sentence_tasks import SentenceTask

CUSTOM_KEYS = ("task", "train_data_path", "validation_data_path")


def custom_task(name: str, custom: Dict[str, Any]) -> SentenceTask:
    """The task a spec's `custom_tasks[name]` describes, after checking its keys and files."""
    if name in GLUE_TASKS or sorted(custom) != sorted(CUSTOM_KEYS):
        raise ConfigurationError(
            f"custom_tasks[{name!r}]: a name that is not a GLUE task's, with exactly "
            f"{list(CUSTOM_KEYS)}."
        )
    for key in CUSTOM_KEYS[1:]:
        if not isinstance(custom[key], str) or not custom[key]:
            raise ConfigurationError(
                f"custom_tasks[{name!r}].{key} must be a file name, not {json.dumps(custom[key])}."
            )
    return SentenceTask.from_dict({"name": name, **custom["task"]})


def grid_tasks(custom_tasks: Mapping[str, Dict[str, Any]]) -> Dict[str, SentenceTask]:
    """The GLUE tasks and a spec's custom tasks, by name."""
    tasks = dict(GLUE_TASKS)
    tasks.update((name, custom_task(name, custom)) for name, custom in custom_tasks.items())
    return tasks
