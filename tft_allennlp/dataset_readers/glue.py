import itertools
import logging
import random
from typing import Dict, Iterable, Iterator, List, NamedTuple, Optional, Tuple, Union

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.common.file_utils import cached_path
from allennlp.data import DatasetReader, Instance, TokenIndexer, Tokenizer
from allennlp.data.fields import Field, LabelField, MetadataField, TensorField, TextField

from tft_allennlp.common.glue_tasks import GlueTask, get_glue_task
from tft_allennlp.common.input_problems import InputProblems, read_lines
from tft_allennlp.common.pair_layout import PairEncoder

logger = logging.getLogger(__name__)


class _Row(NamedTuple):
    """One parsed data row of a GLUE file."""

    line_number: int
    sentence1: str
    sentence2: Optional[str]
    label: Optional[Union[str, float]]
    index: str


@DatasetReader.register("tft_glue")
class GlueTsvReader(DatasetReader):
    """
    Reads the official GLUE TSV files of any of the nine tasks (train, dev, and unlabelled
    test files) and cross-encodes each example as one wordpiece sequence:
    `[CLS] sentence1 [SEP] sentence2 [SEP]` with segment ids for pair tasks, `[CLS] sentence [SEP]`
    for CoLA and SST-2.

    Columns are looked up by header name in the table of `tft_allennlp.common.glue_tasks`;
    files are read with no quoting (GLUE has stray quotes), a UTF-8 byte-order mark is ignored,
    and the file is streamed and sharded across distributed and data-loader workers.

    Instances have a `tokens` `TextField`, a `label` (`LabelField` in the `labels` namespace, or a
    float `TensorField` for STS-B) when the file has labels, and a `metadata` field with the raw
    sentences, the example id and the source line.

    Registered as a `DatasetReader` with name "tft_glue".

    # Parameters

    task : `str`
        One of `cola, sst2, mrpc, stsb, qqp, mnli, qnli, rte, wnli` (MNLI's mismatched files are
        read with `mnli`).
    tokenizer : `Tokenizer`
        A `pretrained_transformer` tokenizer built with `add_special_tokens: false`; the reader
        adds the special tokens itself.
    token_indexers : `Dict[str, TokenIndexer]`, optional
        Attached in `apply_token_indexers`. Defaults to a `pretrained_transformer` indexer for the
        tokenizer's model.
    max_length : `int`, optional (default = `128`)
        Maximum number of wordpieces including special tokens. Longer examples lose wordpieces
        from the end of the longer sentence first ("longest first"); how many examples were
        truncated is logged after each read.
    train_size : `int`, optional (default = `None`)
        If given, read only this many examples, a uniform random sample of the file's rows chosen
        with `seed` (the paper's low-resource settings: 1k, 5k, 10k, 20k). All rows if the file
        has fewer.
    seed : `int`, optional (default = `13370`)
        Seed of the `train_size` sample; the same seed always selects the same rows.
    lenient : `bool`, optional (default = `False`)
        By default a malformed row (wrong number of fields, empty text, unknown label, invalid
        UTF-8) stops reading with an error naming file and line. If `True`, such rows are skipped
        and their number is logged at the end of the read.
    **kwargs
        Passed to `DatasetReader` (`max_instances`, ...).
    """

    def __init__(
        self,
        task: str,
        tokenizer: Tokenizer,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        max_length: int = 128,
        train_size: Optional[int] = None,
        seed: int = 13370,
        lenient: bool = False,
        **kwargs,
    ) -> None:
        super().__init__(
            manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs
        )
        self._task: GlueTask = get_glue_task(task)
        self.encoder = PairEncoder(tokenizer, max_length, "tft_glue")
        self._token_indexers = token_indexers or self.encoder.default_indexers()
        self._max_length = max_length
        if train_size is not None and train_size <= 0:
            raise ConfigurationError(f"train_size must be positive, got {train_size}.")
        self._train_size = train_size
        self._seed = seed
        self._lenient = lenient
        self._num_truncated = 0

    def _read(self, file_path: str) -> Iterable[Instance]:
        path = cached_path(file_path)
        problems = InputProblems(file_path, self._lenient)
        rows: Iterator[_Row] = self._parse_rows(path, problems)
        if self._train_size is not None:
            rows = self._subsample(path, rows)
        self._num_truncated = 0
        num_read = 0
        for row in self.shard_iterable(rows):
            num_read += 1
            yield self.text_to_instance(
                row.sentence1,
                row.sentence2,
                label=row.label,
                index=row.index,
                line_number=row.line_number,
            )
        if self._num_truncated:
            logger.warning(
                "Truncated %d of %d examples of %s to %d wordpieces (longest first).",
                self._num_truncated,
                num_read,
                file_path,
                self._max_length,
            )
        problems.log_summary("rows")

    def count_instances(self, file_path: str, world_size: int = 1) -> List[int]:
        """
        How many instances each of `world_size` distributed ranks reads from `file_path`: rank
        `r` reads every `world_size`-th row from the `r`-th (AllenNLP's `shard_iterable`).
        Counted by parsing the rows, without tokenizing them.
        """
        if self.max_instances is not None:
            raise TypeError("Cannot count instances under max_instances.")
        path = cached_path(file_path)
        total = self._count_rows(path)
        if self._train_size is not None:
            total = min(total, self._train_size)
        return [len(range(rank, total, world_size)) for rank in range(world_size)]

    def _count_rows(self, path: str) -> int:
        return sum(1 for _ in self._parse_rows(path, InputProblems(path, self._lenient)))

    def _subsample(self, path: str, rows: Iterator[_Row]) -> Iterator[_Row]:
        """
        Keeps `train_size` rows chosen uniformly with `seed`. A first streaming pass counts the
        valid rows, so memory stays proportional to the sample, not to the file.
        """
        num_rows = self._count_rows(path)
        if self._train_size >= num_rows:
            logger.info("train_size %d >= %d rows: using all of them.", self._train_size, num_rows)
            yield from rows
            return
        # `random.sample` draws the same positions for any population of the same size, so this
        # selects the rows that `random.Random(seed).sample(all_rows, train_size)` would.
        chosen = set(random.Random(self._seed).sample(range(num_rows), self._train_size))
        for position, row in enumerate(rows):
            if position in chosen:
                yield row

    def _parse_rows(self, path: str, problems: InputProblems) -> Iterator[_Row]:
        task = self._task
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
            sentence1 = fields[sentence1_at].strip()
            sentence2 = fields[sentence2_at].strip() if sentence2_at is not None else None
            if not sentence1 or sentence2 == "":
                problems.reject(line_number, "empty sentence")
                continue
            label: Optional[Union[str, float]] = None
            if label_at is not None:
                label = self._parse_label(fields[label_at].strip(), line_number, problems)
                if label is None:
                    continue
            index = fields[index_at] if index_at is not None else str(line_number)
            yield _Row(line_number, sentence1, sentence2, label, index)

    def _parse_label(
        self, text: str, line_number: int, problems: InputProblems
    ) -> Optional[Union[str, float]]:
        if self._task.is_regression:
            try:
                return float(text)
            except ValueError:
                problems.reject(line_number, f"unknown label: {text!r} is not a number")
                return None
        if text not in self._task.labels:
            problems.reject(
                line_number, f"unknown label: {text!r} (expected one of {self._task.labels})"
            )
            return None
        return text

    def text_to_instance(  # type: ignore
        self,
        sentence1: str,
        sentence2: Optional[str] = None,
        label: Optional[Union[str, float]] = None,
        index: Optional[str] = None,
        line_number: Optional[int] = None,
    ) -> Instance:
        if self._task.is_pair != (sentence2 is not None):
            raise ValueError(
                f"Task {self._task.name} takes "
                + ("two sentences." if self._task.is_pair else "one sentence.")
            )
        second = self.encoder.text(sentence2) if sentence2 is not None else None
        joined = self.encoder.join(self.encoder.text(sentence1), second)
        if joined.truncated:
            self._num_truncated += 1
        fields: Dict[str, Field] = {"tokens": TextField(joined.tokens)}
        if label is not None:
            if self._task.is_regression:
                fields["label"] = TensorField(torch.tensor(float(label)))
            else:
                fields["label"] = LabelField(str(label))
        fields["metadata"] = MetadataField(
            {
                "sentence1": sentence1,
                "sentence2": sentence2,
                "index": index,
                "line_number": line_number,
            }
        )
        return Instance(fields)

    def apply_token_indexers(self, instance: Instance) -> None:
        instance["tokens"].token_indexers = self._token_indexers  # type: ignore

