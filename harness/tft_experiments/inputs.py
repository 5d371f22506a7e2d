"""
The files of an experiment grid that its spec names, checked before its first run: each custom
task's training and validation files, for the tasks with a run left to train. A missing or
unreadable one would otherwise fail every run of its task in turn, each with the reason in its
own log only. (The spec itself never reads the disk; this is the command's check of it.)
"""

from typing import Iterable, Optional, Set

from allennlp.common.checks import ConfigurationError

from tft_allennlp.common.input_problems import MalformedInputError, check_regular_file
from tft_experiments.outcomes import is_finished, tuned_choices
from tft_experiments.runs import GlueRun, Run
from tft_experiments.spec import ExperimentSpec

# The files of a custom task (`ExperimentSpec.custom_tasks`).
TASK_FILES = ("train_data_path", "validation_data_path")


def check_inputs(spec: ExperimentSpec, where: str, again: Iterable[Run] = ()) -> None:
    """
    Raises a one-line `ConfigurationError`, naming the spec file `where`, the key and the file,
    for the first custom task file that a run left to train (unfinished, or one of `again`,
    finished runs to be trained again) would not read: missing, a directory, a named pipe,
    unreadable or empty.
    """
    left = _tasks_left(spec, again)
    for name, custom in spec.custom_tasks.items():
        if name not in left:
            continue
        for key in TASK_FILES:
            path = custom[key]
            problem = _unreadable(path)
            if problem is not None:
                raise ConfigurationError(f"{where}: custom_tasks[{name!r}].{key}: {problem}")


def _tasks_left(spec: ExperimentSpec, again: Iterable[Run]) -> Set[str]:
    """
    The tasks of the fine-tunings left to train (the sweep's, and those of the grid that its
    finished sweeps tell; an unfinished sweep trains every task it chooses for).
    """
    runs = [*spec.sweep_runs(), *spec.glue_runs(tuned_choices(spec))]
    left = [run for run in runs if not is_finished(run)]
    left += [run for run in again if isinstance(run, GlueRun)]
    return {task for run in left for task in run.tasks}


def _unreadable(path: str) -> Optional[str]:
    """Why the data file `path` cannot be read (starting with the path), or None."""
    try:
        check_regular_file(path)  # before `open`, which waits on a named pipe
        with open(path, "rb") as handle:
            empty = not handle.read(1)
    except MalformedInputError as error:
        return str(error)
    except OSError as error:
        return f"{path}: {error.strerror}"
    return f"{path}: is empty" if empty else None
