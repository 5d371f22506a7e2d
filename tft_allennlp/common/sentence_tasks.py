"""
What a sentence-pair or single-sentence task is, as data: where its texts, label and example id
are in its files, its labels (or that it is a regression), and the metrics it is scored with.
The reader (`tft_glue`), the models (`tft_glue_classifier`, `tft_siamese_pair_classifier`,
`tft_glue_head`) and their metrics read a task only through a `SentenceTask`; the nine GLUE
tasks are entries of one table of them (`tft_allennlp.common.glue_tasks`, whose `resolve_task`
reads a config's `task`), and a task of the user's own is a description in the config
(`docs/tasks.md`):

    "task": {"name": "paraphrase", "format": "tsv", "sentence1": "first", "sentence2": "second",
             "label": "verdict", "labels": ["same", "different"],
             "metrics": ["accuracy", "f1"], "positive_label": "same"}
"""

import dataclasses
import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, Mapping, Optional, Tuple, Union

from allennlp.common.checks import ConfigurationError

if TYPE_CHECKING:  # for annotations only
    from allennlp.data import Vocabulary

Column = Union[str, int]
"""A column by its header name (or JSON key), or by its 0-based position."""

TaskDescription = Union[str, Dict[str, Any]]
"""What a config's `task` holds: a GLUE task name, or a description (`SentenceTask` fields)."""

FORMATS = ("tsv", "csv", "jsonl")
CLASSIFICATION_METRICS = ("accuracy", "f1", "mcc")
REGRESSION_METRICS = ("pearson", "spearman")
# How tables name a metric; one not listed is its key, capitalized (`pearson`: "Pearson").
SHORT_METRIC_NAMES = {"accuracy": "Acc", "f1": "F1", "mcc": "MCC"}

SubmissionFile = Tuple[str, str, str]
"""A leaderboard file, the test file it predicts (under the task download), its hub split."""


@dataclass(frozen=True)
class SentenceTask:
    """
    One sentence-pair or single-sentence task. Built from a config's description with
    `resolve_task` (`tft_allennlp.common.glue_tasks`); every field but the text and label columns
    has a default.

    # Parameters

    name : `str`, optional (default = `"task"`)
        Used in messages, and by `allennlp tft-experiment` for its runs and tables.
    sentence1 : `Union[str, int]`, optional (default = `"sentence1"`)
        The first (or only) text column: a header name or JSON key, or a 0-based position.
    sentence2 : `Union[str, int]`, optional (default = `None`)
        The second text column of a pair task; `None` for a single-sentence task.
    label : `Union[str, int]`, optional (default = `"label"`)
        The label column. A file without it (an unlabelled test file) is read without labels.
    labels : `Tuple[str, ...]`, optional
        The classes, as they are written in the files and as predictions name them. Their
        order is the order of the model's outputs. Give `labels` or `regression`, not both.
    regression : `bool`, optional (default = `False`)
        The label is a number, predicted as `score` (mean squared error).
    score_range : `Tuple[float, float]`, optional (default = `None`)
        The valid scores of a regression task (STS-B: `[0, 5]`); others are bad rows. `None`:
        any finite number.
    metrics : `Tuple[str, ...]`, optional
        Classification: `accuracy`, `f1` (of `positive_label`), `mcc` (Matthews correlation);
        regression: `pearson`, `spearman`. Default: `accuracy`, or `pearson` and `spearman`.
        With more than one, `combined_score` is their mean.
    positive_label : `str`, optional (default = `None`)
        The class whose F1 is reported; needed by `f1` and by the Siamese cosine objectives.
    index : `Union[str, int]`, optional (default = `None`)
        The column of the example id (kept in predictions); where a file lacks it, or with
        `None`, the id is the line number.
    format : `str`, optional (default = `"tsv"`)
        `tsv`: tab-separated, no quoting (GLUE's files have stray quotes); `csv`:
        comma-separated with standard quoting; `jsonl`: one JSON object per line, columns are
        its keys (`header` and `columns` do not apply).
    header : `bool`, optional (default = `True`)
        Whether the first line of a TSV or CSV file names the columns. Without a header, name
        columns by position, or give their names in `columns`.
    columns : `Tuple[str, ...]`, optional (default = `None`)
        Column names for lines without a header. With `header` true as well, files may come
        either way, told apart by their number of fields: a first line with as many fields as
        `columns` is data named by them (unless it holds the name of every text and label
        column, a header of that layout), one with any other number is a header (CoLA's train
        and dev files have 4 columns and no header, its test file the header
        `index<TAB>sentence`).
    hub_columns : `Tuple[str, ...]`, optional (default = `None`)
        The text columns in a Hugging Face dataset where they are named otherwise than in the
        files (its `label` column holds the index of the class in `labels`, or the score).
    directory : `str`, optional (default = `None`)
        The task's folder in a download of several tasks (GLUE's `MRPC`).
    submission_files : `Tuple[Tuple[str, str, str], ...]`, optional
        What `allennlp tft-glue-submission` writes for the task: (leaderboard file, test file
        under the download, Hugging Face `config:split`), one per test set (MNLI: matched,
        mismatched and the diagnostic AX). Default: `(name.tsv, directory/test.FORMAT,
        name:test)`.
    metric_names : `Tuple[str, ...]`, optional
        How tables and plots name `metrics`, in their order. Default: `Acc`, `F1`, `MCC`, and
        the key capitalized for the others (`Pearson`).
    """

    name: str = "task"
    sentence1: Column = "sentence1"
    sentence2: Optional[Column] = None
    label: Column = "label"
    labels: Tuple[str, ...] = ()
    regression: bool = False
    score_range: Optional[Tuple[float, float]] = None
    metrics: Tuple[str, ...] = ()
    positive_label: Optional[str] = None
    index: Optional[Column] = None
    format: str = "tsv"
    header: bool = True
    columns: Optional[Tuple[str, ...]] = None
    hub_columns: Optional[Tuple[str, ...]] = None
    directory: Optional[str] = None
    submission_files: Tuple[SubmissionFile, ...] = ()
    metric_names: Tuple[str, ...] = ()

    def __post_init__(self) -> None:
        def fail(message: str) -> None:
            raise ConfigurationError(f"task {self.name!r}: {message}")

        if self.regression == bool(self.labels):
            fail("give `labels` (a list of classes) or `regression: true`, not both or neither.")
        if len(set(self.labels)) != len(self.labels) or not all(
            isinstance(label, str) and label for label in self.labels
        ):
            fail(f"`labels` must be distinct non-empty strings, not {list(self.labels)}.")
        if not self.metrics:
            default = REGRESSION_METRICS if self.regression else ("accuracy",)
            object.__setattr__(self, "metrics", default)
        allowed = REGRESSION_METRICS if self.regression else CLASSIFICATION_METRICS
        unknown = [metric for metric in self.metrics if metric not in allowed]
        if unknown or len(set(self.metrics)) != len(self.metrics):
            kind = "a regression" if self.regression else "a classification"
            fail(f"metrics {list(self.metrics)}: {kind} task takes {', '.join(allowed)}.")
        if self.positive_label is not None and self.positive_label not in self.labels:
            fail(f"positive_label {self.positive_label!r} is not one of {list(self.labels)}.")
        if "f1" in self.metrics and self.positive_label is None:
            fail("metric f1 needs `positive_label`, the class whose F1 is reported.")
        if self.score_range is not None and (
            len(self.score_range) != 2 or not self.score_range[0] < self.score_range[1]
        ):
            fail(f"score_range must be [low, high] with low < high, not {self.score_range}.")
        if self.format not in FORMATS:
            fail(f"format must be one of {', '.join(FORMATS)}, not {self.format!r}.")
        columns = (self.sentence1, self.sentence2, self.label, self.index)
        named = [column for column in columns if column is not None]
        if any(isinstance(c, bool) or not isinstance(c, (str, int)) for c in named):
            fail("columns are names (strings) or 0-based positions (integers).")
        if self.format == "jsonl" and any(isinstance(c, int) for c in named):
            fail("a jsonl task names its columns by their JSON keys, not positions.")
        if any(isinstance(c, int) and c < 0 for c in named):
            fail("column positions start at 0.")
        if (
            self.format != "jsonl"
            and not self.header
            and self.columns is None
            and any(isinstance(c, str) for c in named)
        ):
            fail("a file without header needs column positions, or `columns` naming them.")
        self._check_display_fields(fail)

    def _check_display_fields(self, fail: Callable[[str], None]) -> None:
        """Fills and checks `submission_files` and `metric_names`, which only outputs read."""
        if not self.submission_files:
            test_file = posixpath.join(self.directory or "", f"test.{self.format}")
            default = ((f"{self.name}.tsv", test_file, f"{self.name}:test"),)
            object.__setattr__(self, "submission_files", default)
        files = tuple(tuple(entry) for entry in self.submission_files)
        if any(
            len(entry) != 3 or not all(isinstance(part, str) and part for part in entry)
            for entry in files
        ):
            fail("submission_files holds [leaderboard file, test file, hub split] triples.")
        object.__setattr__(self, "submission_files", files)
        if not self.metric_names:
            names = tuple(
                SHORT_METRIC_NAMES.get(metric, metric.capitalize()) for metric in self.metrics
            )
            object.__setattr__(self, "metric_names", names)
        if len(self.metric_names) != len(self.metrics) or not all(
            isinstance(name, str) and name for name in self.metric_names
        ):
            fail(f"metric_names must name each of the metrics {list(self.metrics)}.")

    @property
    def is_regression(self) -> bool:
        return self.regression

    @property
    def is_pair(self) -> bool:
        return self.sentence2 is not None

    @property
    def hub_sentence1(self) -> Column:
        return self.hub_columns[0] if self.hub_columns else self.sentence1

    @property
    def hub_sentence2(self) -> Optional[Column]:
        if not self.is_pair:
            return None
        return self.hub_columns[1] if self.hub_columns else self.sentence2

    @property
    def validation_metric(self) -> str:
        """The dev score that picks the best epoch: `combined_score`, or the one metric."""
        return "combined_score" if len(self.metrics) > 1 else self.metrics[0]

    def metric_name(self, metric: str) -> str:
        """How tables name `metric`, one of `metrics`; "combined" for `combined_score`."""
        return dict(zip(self.metrics, self.metric_names)).get(metric, "combined")

    @classmethod
    def from_dict(cls, description: Mapping[str, Any]) -> "SentenceTask":
        """A task from a config's description; unknown keys are an error that lists the known."""
        known = [field.name for field in dataclasses.fields(cls)]
        unknown = sorted(set(description) - set(known))
        name = description.get("name", "task")
        if unknown:
            raise ConfigurationError(
                f"task {name!r}: unknown keys {unknown}; a task description takes {known}."
            )
        values: Dict[str, Any] = {
            key: tuple(value) if isinstance(value, list) else value
            for key, value in description.items()
        }
        return cls(**values)


def add_task_labels(vocab: "Vocabulary", task: SentenceTask, namespace: str = "labels") -> None:
    """
    Puts a classification task's labels into `namespace`, in the task's order (a no-op for
    labels the vocabulary has, e.g. one loaded from an archive), so that a config needs no
    vocabulary section for them. A namespace that then holds other labels too (two tasks with
    different labels sharing it) is a `ConfigurationError`.
    """
    if task.is_regression:
        return
    vocab.add_tokens_to_namespace(list(task.labels), namespace)
    held = set(vocab.get_token_to_index_vocabulary(namespace))
    if held != set(task.labels):
        raise ConfigurationError(
            f"task {task.name!r} has the labels {list(task.labels)}, but the {namespace!r} "
            f"namespace also holds {sorted(held - set(task.labels))}: tasks that share a label "
            "namespace need the same labels."
        )
