"""
The tasks an experiment grid may name: the nine GLUE tasks, and the tasks of the user's own that
the specs read in this process describe (`ExperimentSpec.custom_tasks`), with their metrics for
the sweep, the CSV and the tables.
"""

import json
from typing import Any, Dict

from allennlp.common.checks import ConfigurationError

from tft_allennlp.common.glue_tasks import GLUE_TASKS, get_glue_task
from tft_allennlp.common.sentence_tasks import SentenceTask

TASKS: Dict[str, SentenceTask] = dict(GLUE_TASKS)

CUSTOM_KEYS = ("task", "train_data_path", "validation_data_path")


def define_custom_task(name: str, custom: Dict[str, Any]) -> SentenceTask:
    """Checks a spec's custom task and makes its name known to the grid's reports."""
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
    task = SentenceTask.from_dict({"name": name, **custom["task"]})
    TASKS[name] = task
    return task


def task_named(name: str) -> SentenceTask:
    """A GLUE task or a custom task defined in this process."""
    return TASKS[name] if name in TASKS else get_glue_task(name)
