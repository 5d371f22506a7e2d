"""
The rows of one split of a sentence(-pair) task (`SentenceTask`), from either source a user may
have:

- the task's own files: TSV (no quoting, as GLUE's), CSV (standard quoting) or JSON lines,
  columns found by header name, JSON key or position, as the task describes them;
- a Hugging Face dataset: a directory written by `Dataset.save_to_disk` (one split, e.g.
  `glue_mrpc/train` of a saved `DatasetDict`), a `.parquet` or `.arrow` file, or, for users with
  internet, `hf:NAME[:CONFIG]:SPLIT`, e.g. `hf:nyu-mll/glue:mrpc:validation`
  (`datasets.load_dataset`). Columns and integer labels follow `nyu-mll/glue`.

Either way a row becomes the same `GlueRow`, so both give the same instances. A bad row
(missing text, unknown or out-of-range label) goes to the reader's `InputProblems`: an error
naming the file (or dataset) and its line (or 1-based row), or a counted skip.
"""

import csv
import itertools
import json
import math
import os
from typing import TYPE_CHECKING, Any, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

from allennlp.common.checks import ConfigurationError
from allennlp.common.file_utils import cached_path

from tft_allennlp.common.input_problems import (
    InputProblems,
    MalformedInputError,
    blank_reason,
    parse_json,
    read_lines,
)
from tft_allennlp.common.sentence_tasks import Column, SentenceTask

if TYPE_CHECKING:  # for annotations only
    import datasets

HUB_PREFIX = "hf:"

_SEPARATORS = {"tsv": "tab", "csv": "comma"}


class GlueRow(NamedTuple):
    """One valid row: its line (file) or row (dataset) number, texts, label and example id."""

    line_number: int
    sentence1: str
    sentence2: Optional[str]
    label: Optional[Union[str, float]]
    index: str  # type: ignore[assignment]  # a field, not tuple.index


def is_dataset(file_path: str) -> bool:
    """Whether `file_path` names a Hugging Face dataset rather than a file of rows."""
    return (
        file_path.startswith(HUB_PREFIX)
        or file_path.endswith((".parquet", ".arrow"))
        or os.path.exists(os.path.join(file_path, "dataset_info.json"))
        or os.path.exists(os.path.join(file_path, "dataset_dict.json"))
    )


def glue_rows(file_path: str, task: SentenceTask, problems: InputProblems) -> Iterator[GlueRow]:
    """The rows of one split of `task`, from its file or a Hugging Face dataset."""
    if is_dataset(file_path):
        return dataset_rows(file_path, task, problems)
    if task.format == "jsonl":
        return jsonl_rows(cached_path(file_path), task, problems)
    return delimited_rows(cached_path(file_path), task, problems)


def _records(
    path: str, task: SentenceTask, problems: InputProblems
) -> Iterator[Tuple[int, List[str]]]:
    """(first line number, fields) of each record of a TSV or CSV file."""
    lines = read_lines(path, problems)
    if task.format == "tsv":
        for line_number, text in lines:
            yield line_number, text.split("\t")
        return
    # CSV: a quoted field may span lines; a record is numbered by its first line.
    fed: List[int] = []

    def feed() -> Iterator[str]:
        for line_number, text in lines:
            fed.append(line_number)
            yield text + "\n"

    try:
        for fields in csv.reader(feed()):
            yield fed[0], fields
            fed.clear()
    except csv.Error as error:
        # The reader cannot resynchronise after a broken record: the read stops, lenient or not.
        raise MalformedInputError(
            f"{problems.source}:{fed[0] if fed else 1}: invalid CSV: {error}"
        ) from None


def _position(columns: Sequence[str], column: Optional[Column]) -> Optional[int]:
    """Where `column` (a name or a position) is among `columns`; None if absent."""
    if column is None:
        return None
    if isinstance(column, int):
        return column if column < len(columns) else None
    return columns.index(column) if column in columns else None


def is_header(task: SentenceTask, fields: Sequence[str]) -> bool:
    """
    Whether the first line of a TSV or CSV file of `task`, split into `fields`, is a header,
    decided by the task's layout and the line's number of fields, never by a word that a
    sentence may hold too: a task without a header has none; a task with one, and with
    `columns` for files without (CoLA: train and dev files of 4 columns, no header; a test file
    `index<TAB>sentence`), has one unless the line has as many fields as `columns`; then the
    line is a header only if it names every column the task reads by name (its texts and its
    label), which a row of data does not (CoLA's label field holds `0` or `1`, not `label`).
    """
    if not task.header:
        return False
    if task.columns is None or len(fields) != len(task.columns):
        return True
    names = [name for name in (task.sentence1, task.sentence2, task.label) if isinstance(name, str)]
    return all(name in fields for name in names)


def delimited_rows(path: str, task: SentenceTask, problems: InputProblems) -> Iterator[GlueRow]:
    records = _records(path, task, problems)
    first = next(records, None)
    if first is None:
        return
    line_number, fields = first
    columns: Sequence[str]
    if not is_header(task, fields):
        columns = task.columns or [str(position) for position in range(len(fields))]
        records = itertools.chain([first], records)
    elif isinstance(task.sentence1, str) and task.sentence1 not in fields:
        raise ConfigurationError(
            f"{problems.source}:{line_number}: expected a {task.name} header with a "
            f"{task.sentence1!r} column, found {_SEPARATORS[task.format]}-separated "
            f"{fields[:8]!r}"
        )
    else:
        columns = fields
    sentence1_at = _position(columns, task.sentence1)
    sentence2_at = _position(columns, task.sentence2)
    for column, at in ((task.sentence1, sentence1_at), (task.sentence2, sentence2_at)):
        if column is not None and at is None:
            raise ConfigurationError(
                f"{problems.source}:{line_number}: no {column!r} column in the header"
                if isinstance(column, str)
                else f"{problems.source}:{line_number}: no column {column}: the file has "
                f"{len(columns)}"
            )
    assert sentence1_at is not None  # checked above
    label_at = _position(columns, task.label)
    index_at = _position(columns, task.index)
    separator = _SEPARATORS[task.format]
    for line_number, fields in records:
        if len(fields) != len(columns):
            problems.reject(
                line_number,
                f"wrong field count: expected {len(columns)} {separator}-separated fields, "
                f"found {len(fields)}",
            )
            continue
        sentence2 = fields[sentence2_at] if sentence2_at is not None else None
        label = fields[label_at].strip() if label_at is not None else None
        index = fields[index_at] if index_at is not None else str(line_number)
        row = _row(task, line_number, fields[sentence1_at], sentence2, label, index, problems)
        if row is not None:
            yield row


def jsonl_rows(path: str, task: SentenceTask, problems: InputProblems) -> Iterator[GlueRow]:
    """JSON lines: one object per line, with the task's columns as keys (blank lines skipped)."""
    for line_number, text in read_lines(path, problems):
        if not text.strip():
            continue
        try:
            record = parse_json(text)
        except ValueError as error:
            problems.reject(line_number, str(error))
            continue
        if not isinstance(record, dict):
            problems.reject(line_number, f"not a JSON object: {text[:40]!r}")
            continue
        missing = [
            column for column in (task.sentence1, task.sentence2) if column not in (None, *record)
        ]
        if missing:
            problems.reject(line_number, f"missing key: {missing[0]!r}")
            continue
        sentence2 = record[task.sentence2] if task.sentence2 is not None else None
        label = _json_label(record.get(task.label), task)
        index = record.get(task.index) if task.index is not None else None
        index = str(line_number) if index is None else str(index)
        row = _row(task, line_number, record[task.sentence1], sentence2, label, index, problems)
        if row is not None:
            yield row


def _json_label(value: Any, task: SentenceTask) -> Any:
    """A JSON label as the files' text would write it (`1` -> "1", `true` -> "true")."""
    if value is None or isinstance(value, str):
        return value
    if task.is_regression and not isinstance(value, bool):
        return value
    return json.dumps(value)


def dataset_rows(file_path: str, task: SentenceTask, problems: InputProblems) -> Iterator[GlueRow]:
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
    task: SentenceTask,
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
    task: SentenceTask, value: Any, number: int, problems: InputProblems
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
        if not math.isfinite(score):
            problems.reject(number, f"unknown label: score {value!r} is not finite")
            return None
        if task.score_range is not None and not task.score_range[0] <= score <= task.score_range[1]:
            low, high = task.score_range
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
        problems.reject(number, f"unknown label: {value!r} (expected one of {list(task.labels)})")
        return None
    return value
