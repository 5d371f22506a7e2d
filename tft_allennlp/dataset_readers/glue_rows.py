"""
The rows of a GLUE split, from either source a user may have:

- the official TSV files (`MRPC/train.tsv`, ...), columns found by header name;
- a Hugging Face dataset: a directory written by `Dataset.save_to_disk` (one split, e.g.
  `glue_mrpc/train` of a saved `DatasetDict`), a `.parquet` or `.arrow` file, or, for users with
  internet, `hf:NAME[:CONFIG]:SPLIT`, e.g. `hf:nyu-mll/glue:mrpc:validation`
  (`datasets.load_dataset`). Columns and integer labels follow `nyu-mll/glue`.

Either way a row becomes the same `GlueRow`, so both give the same instances. A bad row
(missing text, unknown or out-of-range label) goes to the reader's `InputProblems`: an error
naming the file (or dataset) and its line (or 1-based row), or a counted skip.
"""

import itertools
import math
import os
from typing import TYPE_CHECKING, Any, Iterator, NamedTuple, Optional, Tuple, Union

from allennlp.common.checks import ConfigurationError
from allennlp.common.file_utils import cached_path

from tft_allennlp.common.glue_tasks import GlueTask
from tft_allennlp.common.input_problems import InputProblems, blank_reason, read_lines

if TYPE_CHECKING:  # for annotations only
    import datasets

HUB_PREFIX = "hf:"


class GlueRow(NamedTuple):
    """One valid row: its line (TSV) or row (dataset) number, texts, label and example id."""

    line_number: int
    sentence1: str
    sentence2: Optional[str]
    label: Optional[Union[str, float]]
    index: str  # type: ignore[assignment]  # a field, not tuple.index


def is_dataset(file_path: str) -> bool:
    """Whether `file_path` names a Hugging Face dataset rather than a TSV file."""
    return (
        file_path.startswith(HUB_PREFIX)
        or file_path.endswith((".parquet", ".arrow"))
        or os.path.exists(os.path.join(file_path, "dataset_info.json"))
        or os.path.exists(os.path.join(file_path, "dataset_dict.json"))
    )


def glue_rows(file_path: str, task: GlueTask, problems: InputProblems) -> Iterator[GlueRow]:
    """The rows of one split of `task`, from a TSV file or a Hugging Face dataset."""
    if is_dataset(file_path):
        return dataset_rows(file_path, task, problems)
    return tsv_rows(cached_path(file_path), task, problems)


def tsv_rows(path: str, task: GlueTask, problems: InputProblems) -> Iterator[GlueRow]:
    lines = read_lines(path, problems)
    first = next(lines, None)
    if first is None:
        return
    line_number, text = first
    fields = text.split("\t")
    if task.sentence1 in fields:
        columns: Tuple[str, ...] = tuple(fields)
    elif task.headerless_columns is not None and len(fields) == len(task.headerless_columns):
        columns = task.headerless_columns
        lines = itertools.chain([first], lines)
    else:
        raise ConfigurationError(
            f"{problems.source}:{line_number}: expected a {task.name} header with a "
            f"{task.sentence1!r} column, found {text[:200]!r}"
        )
    position = {name: i for i, name in enumerate(columns)}
    sentence1_at = position[task.sentence1]
    sentence2_at = position.get(task.sentence2) if task.sentence2 else None
    if task.sentence2 and sentence2_at is None:
        raise ConfigurationError(
            f"{problems.source}:{line_number}: no {task.sentence2!r} column in the header"
        )
    label_at = position.get(task.label)
    index_at = position.get(task.index)
    for line_number, text in lines:
        fields = text.split("\t")
        if len(fields) != len(columns):
            problems.reject(
                line_number,
                f"wrong field count: expected {len(columns)} tab-separated fields, "
                f"found {len(fields)}",
            )
            continue
        sentence2 = fields[sentence2_at] if sentence2_at is not None else None
        label = fields[label_at].strip() if label_at is not None else None
        index = fields[index_at] if index_at is not None else str(line_number)
        row = _row(task, line_number, fields[sentence1_at], sentence2, label, index, problems)
        if row is not None:
            yield row


def dataset_rows(file_path: str, task: GlueTask, problems: InputProblems) -> Iterator[GlueRow]:
    dataset = load_split(file_path)
    names = dataset.column_names
    for column in (task.hub_sentence1, task.hub_sentence2):
        if column is not None and column not in names:
            raise ConfigurationError(
                f"{file_path}: no {column!r} column for {task.name} (columns: {names}); GLUE "
                "datasets follow nyu-mll/glue"
            )
    for number, record in enumerate(dataset, start=1):
        sentence2 = record[task.hub_sentence2] if task.hub_sentence2 else None
        label = record.get("label")
        if label == -1:
            label = None  # the unlabelled test splits of nyu-mll/glue
        index = str(record.get("idx", number - 1))
        row = _row(task, number, record[task.hub_sentence1], sentence2, label, index, problems)
        if row is not None:
            yield row


def load_split(file_path: str) -> "datasets.Dataset":
    """One split of a Hugging Face dataset (see the module's docstring for the forms)."""
    import datasets

    if file_path.startswith(HUB_PREFIX):
        parts = file_path[len(HUB_PREFIX) :].split(":")
        if len(parts) not in (2, 3) or not all(parts):
            raise ConfigurationError(f"{file_path}: expected hf:NAME[:CONFIG]:SPLIT")
        return datasets.load_dataset(parts[0], *parts[1:-1], split=parts[-1])
    if file_path.endswith(".parquet"):
        return datasets.Dataset.from_parquet(file_path)
    if file_path.endswith(".arrow"):
        return datasets.Dataset.from_file(file_path)
    loaded = datasets.load_from_disk(file_path)
    if isinstance(loaded, datasets.DatasetDict):
        raise ConfigurationError(
            f"{file_path} holds the splits {list(loaded)}: name one, e.g. "
            f"{os.path.join(file_path, next(iter(loaded)))}"
        )
    return loaded


def _row(
    task: GlueTask,
    number: int,
    sentence1: Any,
    sentence2: Any,
    label: Any,
    index: str,
    problems: InputProblems,
) -> Optional[GlueRow]:
    """The checked row, or None after reporting its problem."""
    texts = [sentence1] + ([sentence2] if task.is_pair else [])
    for text in texts:
        reason = blank_reason(text) if isinstance(text, str) else "empty sentence"
        if reason is not None:
            problems.reject(number, reason)
            return None
    parsed = None if label is None else _label(task, label, number, problems)
    if label is not None and parsed is None:
        return None
    return GlueRow(
        number, sentence1.strip(), sentence2.strip() if task.is_pair else None, parsed, index
    )


def _label(
    task: GlueTask, value: Any, number: int, problems: InputProblems
) -> Optional[Union[str, float]]:
    """
    A TSV label string, or a dataset's integer class or float score, as the task's label; None
    after reporting a bad one.
    """
    if isinstance(value, bool):
        value = str(value)
    if task.is_regression:
        try:
            score = float(value)
        except (TypeError, ValueError):
            problems.reject(number, f"unknown label: {value!r} is not a number")
            return None
        low, high = task.score_range
        if not math.isfinite(score) or not low <= score <= high:
            problems.reject(
                number, f"unknown label: score {value!r} is outside [{low:g}, {high:g}]"
            )
            return None
        return score
    if isinstance(value, int):
        if not 0 <= value < len(task.labels):
            problems.reject(
                number, f"unknown label: class {value} (expected 0 to {len(task.labels) - 1})"
            )
            return None
        return task.labels[value]
    if value not in task.labels:
        problems.reject(number, f"unknown label: {value!r} (expected one of {task.labels})")
        return None
    return value
