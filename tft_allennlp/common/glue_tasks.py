"""
The nine GLUE tasks, as one table of `SentenceTask` descriptions: where their text, label and
id live in the official TSV files, their label sets, and the metrics GLUE scores them with. A
config names one of them by its name (`"task": "mrpc"`); a task of the user's own is a
description of the same kind (`tft_allennlp.common.sentence_tasks`); `resolve_task` reads
either from a config. An entry also names the files `tft-glue-submission` writes for the task.

Columns are found by header name, so a task's train, dev and (unlabelled) test files share
one entry even though their columns differ. CoLA's train and dev files are the only ones
without a header; `columns` names their four columns, and a first line of four fields is read
as data (its test file has two, under the header `index<TAB>sentence`), whatever its sentence
says.
"""

from typing import Dict, Mapping, Tuple, Union

from allennlp.common.checks import ConfigurationError

from tft_allennlp.common.sentence_tasks import SentenceTask, SubmissionFile, TaskDescription

_BINARY = ("0", "1")
_ENTAILMENT = ("entailment", "not_entailment")


def _submitted(name: str, folder: str) -> Tuple[SubmissionFile, ...]:
    """The leaderboard file of a task with one test set: `FOLDER.tsv` from `FOLDER/test.tsv`."""
    return ((f"{folder}.tsv", f"{folder}/test.tsv", f"{name}:test"),)


GLUE_TASKS: Dict[str, SentenceTask] = {
    task.name: task
    for task in [
        SentenceTask(
            name="cola",
            directory="CoLA",
            submission_files=_submitted("cola", "CoLA"),
            sentence1="sentence",
            labels=_BINARY,
            metrics=("mcc",),
            index="index",
            columns=("source", "label", "author_label", "sentence"),
        ),
        SentenceTask(
            name="sst2",
            directory="SST-2",
            submission_files=_submitted("sst2", "SST-2"),
            sentence1="sentence",
            labels=_BINARY,
            index="index",
        ),
        SentenceTask(
            name="mrpc",
            directory="MRPC",
            submission_files=_submitted("mrpc", "MRPC"),
            sentence1="#1 String",
            sentence2="#2 String",
            label="Quality",
            labels=_BINARY,
            metrics=("accuracy", "f1"),
            positive_label="1",
            index="index",
            hub_columns=("sentence1", "sentence2"),
        ),
        SentenceTask(
            name="stsb",
            directory="STS-B",
            submission_files=_submitted("stsb", "STS-B"),
            sentence2="sentence2",
            label="score",
            regression=True,
            score_range=(0.0, 5.0),
            index="index",
        ),
        SentenceTask(
            name="qqp",
            directory="QQP",
            submission_files=_submitted("qqp", "QQP"),
            sentence1="question1",
            sentence2="question2",
            label="is_duplicate",
            labels=_BINARY,
            metrics=("accuracy", "f1"),
            positive_label="1",
            index="id",
        ),
        SentenceTask(
            name="mnli",
            directory="MNLI",
            # The MNLI model also predicts the diagnostic set, AX.
            submission_files=(
                ("MNLI-m.tsv", "MNLI/test_matched.tsv", "mnli:test_matched"),
                ("MNLI-mm.tsv", "MNLI/test_mismatched.tsv", "mnli:test_mismatched"),
                ("AX.tsv", "diagnostic/diagnostic.tsv", "ax:test"),
            ),
            sentence2="sentence2",
            label="gold_label",
            labels=("entailment", "neutral", "contradiction"),
            index="index",
            hub_columns=("premise", "hypothesis"),
        ),
        SentenceTask(
            name="qnli",
            directory="QNLI",
            submission_files=_submitted("qnli", "QNLI"),
            sentence1="question",
            sentence2="sentence",
            labels=_ENTAILMENT,
            index="index",
        ),
        SentenceTask(
            name="rte",
            directory="RTE",
            submission_files=_submitted("rte", "RTE"),
            sentence2="sentence2",
            labels=_ENTAILMENT,
            index="index",
        ),
        SentenceTask(
            name="wnli",
            directory="WNLI",
            submission_files=_submitted("wnli", "WNLI"),
            sentence2="sentence2",
            labels=_BINARY,
            index="index",
        ),
    ]
}


def get_glue_task(name: str) -> SentenceTask:
    """
    Looks a task up by its name, with an error that lists the known names.
    """
    if name not in GLUE_TASKS:
        raise ConfigurationError(
            f"Unknown GLUE task {name!r}; choose one of {', '.join(GLUE_TASKS)}, or describe "
            "a task of your own (docs/tasks.md)."
        )
    return GLUE_TASKS[name]


def resolve_task(task: Union[TaskDescription, SentenceTask]) -> SentenceTask:
    """
    The task a config's `task` names: a GLUE task name (`mrpc`, ...) or a description of the
    user's own task (the fields of `SentenceTask`).
    """
    if isinstance(task, SentenceTask):
        return task
    if isinstance(task, str):
        return get_glue_task(task)
    if isinstance(task, Mapping):
        return SentenceTask.from_dict(task)
    raise ConfigurationError(
        f"task must be a GLUE task name or a task description (a dict), not {task!r}."
    )
