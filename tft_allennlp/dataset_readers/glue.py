import logging
import random
from typing import Dict, Iterable, Iterator, List, Optional, Union

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Instance, TokenIndexer, Tokenizer
from allennlp.data.fields import Field, LabelField, MetadataField, TensorField, TextField

from tft_allennlp.common.glue_tasks import resolve_task
from tft_allennlp.common.input_problems import InputProblems
from tft_allennlp.common.pair_layout import PairEncoder
from tft_allennlp.common.sentence_tasks import SentenceTask, TaskDescription
from tft_allennlp.dataset_readers.glue_rows import GlueRow, glue_rows

logger = logging.getLogger(__name__)

_NO_ROWS = "the file is empty or holds only its header"

PAIR_ENCODINGS = ("cross", "separate")
"""`pair_encoding`: both sentences in one sequence, or each in its own (Siamese models)."""


@DatasetReader.register("tft_glue")
class GlueTsvReader(DatasetReader):
    """
    Reads any split (train, dev, and unlabelled test) of a sentence-pair or single-sentence
    task: one of the nine GLUE tasks by name, from the official TSV files, or a task of your
    own described in the config (TSV, CSV or JSON lines; columns by name or position; string
    labels or a regression; `tft_allennlp.common.sentence_tasks`, docs/tasks.md); or from a
    Hugging Face dataset (`glue_rows`: a `save_to_disk` directory, a parquet or arrow file, or
    `hf:nyu-mll/glue:mrpc:train`). It encodes each example as one
    wordpiece sequence in its tokenizer's layout (`PairEncoder`): `[CLS] sentence1 [SEP]
    sentence2 [SEP]` with segment ids for BERT, `<s> sentence1 </s></s> sentence2 </s>` for
    RoBERTa, ..., and one sentence for CoLA and SST-2.

    Columns are looked up as the task describes them (GLUE's by header name, in the table of
    `tft_allennlp.common.glue_tasks`); TSV files are read with no quoting (GLUE has stray
    quotes), CSV files with standard quoting; a UTF-8 byte-order mark is ignored.
    Rows are streamed and sharded across distributed and data-loader workers.

    With `pair_encoding: "separate"` the two sentences of a pair task are encoded apart, for
    Siamese models (`tft_siamese_pair_classifier`): `tokens1` and `tokens2` each hold one
    sentence in the tokenizer's single-sentence layout (`[CLS] sentence [SEP]`, `<s> sentence
    </s>`, ...), in place of `tokens`.

    Instances have a `tokens` `TextField` (or `tokens1` and `tokens2`), a `label` (`LabelField`
    in the `labels` namespace, or a float `TensorField` for a regression such as STS-B) when
    the file has labels, and a `metadata` field with the raw sentences, the example id and the
    source file and line.

    Registered as a `DatasetReader` with name "tft_glue".

    # Parameters

    task : `Union[str, Dict[str, Any]]`
        A GLUE task name, one of `cola, sst2, mrpc, stsb, qqp, mnli, qnli, rte, wnli` (MNLI's
        mismatched files are read with `mnli`), or the description of a task of your own: file
        `format` (`tsv`, `csv`, `jsonl`), `header`, the `sentence1`, `sentence2`, `label` and
        `index` columns (names or 0-based positions), `labels` or `regression: true`,
        `metrics`, `positive_label` (see `SentenceTask`). The model takes the same `task`.
    tokenizer : `Tokenizer`
        A `pretrained_transformer` tokenizer built with `add_special_tokens: false`; the reader
        adds the special tokens itself.
    token_indexers : `Dict[str, TokenIndexer]`, optional
        Attached in `apply_token_indexers`. Defaults to a `pretrained_transformer` indexer for the
        tokenizer's model.
    max_length : `int`, optional (default = `128`)
        Maximum number of wordpieces including special tokens. Longer examples lose wordpieces
        from the end of the longer sentence first ("longest first"); how many examples were
        truncated is logged after each read. With `pair_encoding: "separate"` the limit holds
        for each sentence on its own, which loses wordpieces from its end.
    pair_encoding : `str`, optional (default = `"cross"`)
        `"cross"`: both sentences in one sequence, `tokens` (cross-encoders such as
        `tft_glue_classifier`). `"separate"`: each sentence in its own sequence, `tokens1` and
        `tokens2` (Siamese models); pair tasks only.
    train_size : `int`, optional (default = `None`)
        If given, read only this many examples, a uniform random sample of the file's rows chosen
        with `seed` (the paper's low-resource settings: 1k, 5k, 10k, 20k). All rows if the file
        has fewer.
    seed : `int`, optional (default = `13370`)
        Seed of the `train_size` sample; the same seed always selects the same rows.
    held_out_fraction : `float`, optional (default = `0.0`)
        If more than 0, this fraction of the rows read (after the `train_size` sample), chosen
        with `seed`, is held out of training: for a validation split carved from the training
        data, which `allennlp tft-tune` tunes on instead of the dev set it reports. The reader
        reads the rest, or with `held_out: true` the held-out rows only: a training and a
        validation reader with the same `train_size`, `seed` and `held_out_fraction` read the
        two parts of the same rows.
    held_out : `bool`, optional (default = `False`)
        Read the held-out rows (see `held_out_fraction`) instead of the others.
    lenient : `bool`, optional (default = `False`)
        By default a malformed row (wrong number of fields, empty text, unknown label, a score
        that is not a number in the task's `score_range`, invalid UTF-8, invalid JSON) stops
        reading with an error naming
        file and line. If `True`, such rows are skipped and their number is logged at the end
        of the read.
    **kwargs
        Passed to `DatasetReader` (`max_instances`, ...).
    """

    def __init__(
        self,
        task: TaskDescription,
        tokenizer: Tokenizer,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        max_length: int = 128,
        train_size: Optional[int] = None,
        seed: int = 13370,
        lenient: bool = False,
        pair_encoding: str = "cross",
        held_out_fraction: float = 0.0,
        held_out: bool = False,
        **kwargs,
    ) -> None:
        super().__init__(
            manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs
        )
        self._task: SentenceTask = resolve_task(task)
        if pair_encoding not in PAIR_ENCODINGS:
            raise ConfigurationError(
                f"pair_encoding must be one of {', '.join(PAIR_ENCODINGS)}, not {pair_encoding!r}."
            )
        if pair_encoding == "separate" and not self._task.is_pair:
            raise ConfigurationError(
                f"pair_encoding 'separate' needs a sentence-pair task, not {self._task.name}."
            )
        self._pair_encoding = pair_encoding
        self.encoder = PairEncoder(tokenizer, max_length, "tft_glue")
        self._token_indexers = token_indexers or self.encoder.default_indexers()
        self._max_length = max_length
        if train_size is not None and train_size <= 0:
            raise ConfigurationError(f"train_size must be positive, got {train_size}.")
        self._train_size = train_size
        if not 0.0 <= held_out_fraction < 1.0:
            raise ConfigurationError(
                f"held_out_fraction must be at least 0 and less than 1, not {held_out_fraction}."
            )
        if held_out and not held_out_fraction:
            raise ConfigurationError("held_out: true reads nothing without a held_out_fraction.")
        self._held_out_fraction = held_out_fraction
        self._held_out = held_out
        self._seed = seed
        self._lenient = lenient
        self._num_truncated = 0

    @property
    def task(self) -> SentenceTask:
        """The task this reader is for."""
        return self._task

    def _read(self, file_path: str) -> Iterable[Instance]:
        problems = InputProblems(file_path, self._lenient)
        rows: Iterator[GlueRow] = problems.counted(glue_rows(file_path, self._task, problems))
        if self._train_size is not None:
            rows = self._subsample(file_path, rows)
        if self._held_out_fraction:
            rows = self._carve(file_path, rows)
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
                file_path=file_path,
            )
        if self._num_truncated:
            logger.warning(
                "Truncated %d of %d examples of %s to %d wordpieces (%s).",
                self._num_truncated,
                num_read,
                file_path,
                self._max_length,
                "each sentence" if self._pair_encoding == "separate" else "longest first",
            )
        problems.log_summary("rows")
        problems.require_records("rows", _NO_ROWS)

    def count_instances(self, file_path: str, world_size: int = 1) -> List[int]:
        """
        How many instances each of `world_size` distributed ranks reads from `file_path`: rank
        `r` reads every `world_size`-th row from the `r`-th (AllenNLP's `shard_iterable`).
        Counted by parsing the rows, without tokenizing them.
        """
        if self.max_instances is not None:
            raise TypeError("Cannot count instances under max_instances.")
        total = self._count_rows(file_path)
        if self._train_size is not None:
            total = min(total, self._train_size)
        if self._held_out_fraction:
            held_out = self._num_held_out(total)
            total = held_out if self._held_out else total - held_out
        return [len(range(rank, total, world_size)) for rank in range(world_size)]

    def _count_rows(self, file_path: str) -> int:
        problems = InputProblems(file_path, self._lenient)
        num_rows = sum(1 for _ in problems.counted(glue_rows(file_path, self._task, problems)))
        problems.require_records("rows", _NO_ROWS)
        return num_rows

    def _subsample(self, path: str, rows: Iterator[GlueRow]) -> Iterator[GlueRow]:
        """
        Keeps `train_size` rows chosen uniformly with `seed`. A first streaming pass counts the
        valid rows, so memory stays proportional to the sample, not to the file.
        """
        assert self._train_size is not None  # only a training reader with a train_size samples
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

    def _num_held_out(self, num_rows: int) -> int:
        """How many of `num_rows` rows are held out: at least one, and one left to train on."""
        if num_rows < 2:
            raise ConfigurationError(
                f"held_out_fraction needs at least 2 rows to split, not {num_rows}."
            )
        return min(max(1, round(self._held_out_fraction * num_rows)), num_rows - 1)

    def _carve(self, path: str, rows: Iterator[GlueRow]) -> Iterator[GlueRow]:
        """
        The rows of `rows` left after holding out `held_out_fraction` of them, chosen with
        `seed`; with `held_out`, the held-out ones.
        """
        num_rows = self._count_rows(path)
        if self._train_size is not None:
            num_rows = min(num_rows, self._train_size)
        # Another stream of the seed than the `train_size` sample's.
        chosen = set(
            random.Random(f"held out {self._seed}").sample(
                range(num_rows), self._num_held_out(num_rows)
            )
        )
        for position, row in enumerate(rows):
            if (position in chosen) == self._held_out:
                yield row

    def text_to_instance(  # type: ignore
        self,
        sentence1: str,
        sentence2: Optional[str] = None,
        label: Optional[Union[str, float]] = None,
        index: Optional[str] = None,
        line_number: Optional[int] = None,
        file_path: Optional[str] = None,
    ) -> Instance:
        if self._task.is_pair != (sentence2 is not None):
            raise ValueError(
                f"Task {self._task.name} takes "
                + ("two sentences." if self._task.is_pair else "one sentence.")
            )
        first = self.encoder.text(sentence1)
        second = self.encoder.text(sentence2) if sentence2 is not None else None
        if self._pair_encoding == "separate":
            encoded = {
                "tokens1": self.encoder.join(first),
                "tokens2": self.encoder.join(second),  # type: ignore[arg-type]
            }
        else:
            encoded = {"tokens": self.encoder.join(first, second)}
        if any(joined.truncated for joined in encoded.values()):
            self._num_truncated += 1
        fields: Dict[str, Field] = {
            name: TextField(joined.tokens) for name, joined in encoded.items()
        }
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
                "file": file_path,
            }
        )
        return Instance(fields)

    def apply_token_indexers(self, instance: Instance) -> None:
        for name in ("tokens1", "tokens2") if self._pair_encoding == "separate" else ("tokens",):
            instance[name].token_indexers = self._token_indexers  # type: ignore
