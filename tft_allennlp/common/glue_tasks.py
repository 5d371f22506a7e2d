"""
One declarative table of the nine GLUE tasks: where their text, label and id live in the
official TSV files, their label sets, and the metrics GLUE scores them with. The reader, the
model and the configs all read this table; nothing else knows about per-task layouts.

Columns are found by header name, so a task's train, dev and (unlabelled) test files share
one entry even though their columns differ. CoLA's train and dev files are the only ones
without a header; `headerless_columns` names their columns.
"""

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

from allennlp.common.checks import ConfigurationError


@dataclass(frozen=True)
class GlueTask:
    name: str
    """The task name used by the reader, the model and `training_configs/glue/`."""
    directory: str
    """The task's folder in the official GLUE download."""
    sentence1: str
    sentence2: Optional[str]
    """Header names of the text columns; `sentence2` is `None` for single-sentence tasks."""
    label: str
    """Header name of the label column (absent from test files)."""
    labels: Tuple[str, ...]
    """The allowed labels; empty for the regression task STS-B."""
    metrics: Tuple[str, ...]
    """GLUE's metrics for the task; with more than one, `combined_score` is their mean."""
    positive_label: Optional[str] = None
    """The class whose F1 is reported (MRPC, QQP)."""
    index: str = "index"
    """Header name of the example id column, used in predictions (not in every file)."""
    headerless_columns: Optional[Tuple[str, ...]] = None
    """Column names for files without a header line (CoLA train/dev)."""
    hub_columns: Optional[Tuple[str, ...]] = None
    """The text columns of the task in Hugging Face's `nyu-mll/glue`, where they are not named
    as in the TSV files; its `label` column holds the index of the label in `labels` (or the
    STS-B score), -1 in the unlabelled test splits."""
    score_range: Tuple[float, float] = (0.0, 5.0)
    """The valid scores of a regression task (STS-B: 0 to 5)."""

    @property
    def hub_sentence1(self) -> str:
        return self.hub_columns[0] if self.hub_columns else self.sentence1

    @property
    def hub_sentence2(self) -> Optional[str]:
        if not self.is_pair:
            return None
        return self.hub_columns[1] if self.hub_columns else self.sentence2

    @property
    def is_regression(self) -> bool:
        return not self.labels

    @property
    def is_pair(self) -> bool:
        return self.sentence2 is not None


_BINARY = ("0", "1")
_ENTAILMENT = ("entailment", "not_entailment")

GLUE_TASKS: Dict[str, GlueTask] = {
    task.name: task
    for task in [
        GlueTask(
            "cola",
            "CoLA",
            "sentence",
            None,
            "label",
            _BINARY,
            ("mcc",),
            headerless_columns=("source", "label", "author_label", "sentence"),
        ),
        GlueTask("sst2", "SST-2", "sentence", None, "label", _BINARY, ("accuracy",)),
        GlueTask(
            "mrpc",
            "MRPC",
            "#1 String",
            "#2 String",
            "Quality",
            _BINARY,
            ("accuracy", "f1"),
            positive_label="1",
            hub_columns=("sentence1", "sentence2"),
        ),
        GlueTask("stsb", "STS-B", "sentence1", "sentence2", "score", (), ("pearson", "spearman")),
        GlueTask(
            "qqp",
            "QQP",
            "question1",
            "question2",
            "is_duplicate",
            _BINARY,
            ("accuracy", "f1"),
            positive_label="1",
            index="id",
        ),
        GlueTask(
            "mnli",
            "MNLI",
            "sentence1",
            "sentence2",
            "gold_label",
            ("entailment", "neutral", "contradiction"),
            ("accuracy",),
            hub_columns=("premise", "hypothesis"),
        ),
        GlueTask("qnli", "QNLI", "question", "sentence", "label", _ENTAILMENT, ("accuracy",)),
        GlueTask("rte", "RTE", "sentence1", "sentence2", "label", _ENTAILMENT, ("accuracy",)),
        GlueTask("wnli", "WNLI", "sentence1", "sentence2", "label", _BINARY, ("accuracy",)),
    ]
}


def get_glue_task(name: str) -> GlueTask:
    """
    Looks a task up by its name, with an error that lists the known names.
    """
    if name not in GLUE_TASKS:
        raise ConfigurationError(
            f"Unknown GLUE task {name!r}; choose one of {', '.join(GLUE_TASKS)}."
        )
    return GLUE_TASKS[name]
