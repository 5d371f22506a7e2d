"""
The input of a predictor: the lines of its file, each with its file and line number
(`input_lines`), and one JSON input parsed and checked field by field, so that a bad line stops
`allennlp predict` with a one-line `MalformedInputError` naming its file and line, in the
readers' style (`pairs.jsonl:5: 'sentence2' must be non-empty text, not ""`), before anything
is predicted for it and before it can fail deep inside the tokenizer or the model.
"""

import sys
from typing import Any, Dict, Iterable, Iterator, List, NoReturn, Optional, Sequence, Tuple, Union

import numpy
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.common.file_utils import open_compressed
from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import TextField
from allennlp.models import Model
from allennlp.predictors.predictor import Predictor

from tft_allennlp.common.aligned_corpus import PhrasePair, Span, check_span
from tft_allennlp.common.input_problems import (
    InputProblems,
    MalformedInputError,
    blank_reason,
    decode_line,
    parse_json,
    shown,
)

STDIN = "-"
"""The input file name that makes `allennlp predict` read stdin (`<stdin>` in messages)."""


def input_lines(input_file: str) -> Iterator[Tuple[str, str]]:
    """
    The non-blank lines of a predictor's input, as `allennlp predict` reads it (a file, a URL,
    a compressed file, or `-` for stdin), each with where it is, for messages: `pairs.jsonl:5`,
    `<stdin>:5`. Line numbers count every line from 1, blank ones too. A line that is not UTF-8,
    or that holds a lone carriage return (lines end in LF or CRLF), is a `MalformedInputError`
    naming its file and line; a UTF-8 byte-order mark that starts the input is dropped.
    """
    source = "<stdin>" if input_file == STDIN else input_file
    problems = InputProblems(source)
    if input_file == STDIN:
        buffer = getattr(sys.stdin, "buffer", None)  # a text stream put in its place has none
        raw = buffer if buffer is not None else (line.encode("utf-8") for line in sys.stdin)
        yield from _decoded(raw, source, problems)
        return
    with open_compressed(input_file, "rb", encoding=None) as handle:
        yield from _decoded(handle, source, problems)


def _decoded(
    raw_lines: Iterable[bytes], source: str, problems: InputProblems
) -> Iterator[Tuple[str, str]]:
    for number, raw in enumerate(raw_lines, start=1):
        text = decode_line(number, raw, problems)  # a strict `problems` raises
        if text is not None and text.strip():
            yield f"{source}:{number}", text


class InputRecord:
    """
    A JSON object given to a predictor, with getters that return a field only when a model can
    take it, and otherwise raise a `MalformedInputError` saying where and what is wrong.

    # Parameters

    record : `Any`
        The parsed JSON value; anything but an object is rejected.
    where : `str`, optional (default = `"input"`)
        Where the record came from, the start of every message: `"pairs.jsonl:5"` for a line of
        a file, `"input line 3"` for the third line given to `load_line`, `"input"` for a
        dictionary given to `predict_json`.
    """

    def __init__(self, record: Any, where: str = "input") -> None:
        self.where = where
        if not isinstance(record, dict):
            self.reject(f"expected a JSON object, not {shown(record)}")
        self.record: JsonDict = record

    @classmethod
    def from_line(cls, line: str, where: str) -> "InputRecord":
        """The record on the input line `where` names (`"pairs.jsonl:5"`)."""
        try:
            record = parse_json(line)
        except ValueError as error:
            raise MalformedInputError(f"{where}: {error}") from None
        return cls(record, where)

    def reject(self, reason: str) -> NoReturn:
        raise MalformedInputError(f"{self.where}: {reason}")

    def __contains__(self, key: str) -> bool:
        return key in self.record

    def text(self, key: str) -> str:
        """The field `key`: text with something besides whitespace."""
        value = self.record.get(key)
        if not isinstance(value, str) or blank_reason(value) is not None:
            self.reject(f"{key!r} must be non-empty text, not {shown(value)}")
        return value

    def words_or_text(self, words_key: str, text_key: str) -> Union[List[str], str]:
        """
        One sentence as a list of words (`words_key`), when given, or else as text (`text_key`).
        """
        if words_key in self.record:
            value = self.record[words_key]
            if not isinstance(value, (list, tuple)) or not value:
                self.reject(f"{words_key!r} must be a non-empty list of words, not {shown(value)}")
            for index, word in enumerate(value):
                if not isinstance(word, str) or blank_reason(word) is not None:
                    self.reject(
                        f"{words_key!r} word {index} must be non-empty text, not {shown(word)}"
                    )
            return list(value)
        if text_key in self.record:
            return self.text(text_key)
        self.reject(f"expected {words_key!r} (a list of words) or {text_key!r} (text)")

    def spans(self, key: str, words: List[str]) -> List[Span]:
        """The field `key`: a list of word spans of `words`."""
        return [self._span(value, f"{key}[{i}]", words) for i, value in enumerate(self._list(key))]

    def phrase_pairs(self, key: str, source: List[str], target: List[str]) -> List[PhrasePair]:
        """The field `key`: a list of `[source span, target span]` pairs."""
        pairs = []
        for index, pair in enumerate(self._list(key)):
            what = f"{key}[{index}]"
            if (
                not isinstance(pair, (list, tuple))
                or len(pair) != 2
                or not all(isinstance(span, (list, tuple)) for span in pair)
            ):
                self.reject(
                    f"malformed phrase pair: {what} {shown(pair)} is not "
                    f"[source span, target span] (one pair: {key} [[[0, 1], [2, 3]]])"
                )
            pairs.append(
                (
                    self._span(pair[0], f"{what} source span", source),
                    self._span(pair[1], f"{what} target span", target),
                )
            )
        return pairs

    def _list(self, key: str) -> Sequence[Any]:
        value = self.record.get(key)
        if not isinstance(value, (list, tuple)):
            self.reject(f"{key!r} must be a list, not {shown(value)}")
        return value

    def _span(self, value: Any, what: str, words: List[str]) -> Span:
        """An inclusive `[start, end]` span of `words`."""
        try:
            return check_span(value, len(words), what)
        except ValueError as error:
            self.reject(str(error))


PRECISIONS = ("float32", "bfloat16", "float16")
"""The dtypes a `LineCheckingPredictor` computes in (`precision`)."""


class LineCheckingPredictor(Predictor):
    """
    A predictor that checks each input line as it loads it, so that a bad line stops
    `allennlp predict` with a `MalformedInputError` naming it before anything is predicted for
    it. Subclasses implement `_checked(record)`, the same check `_json_to_instance` applies.
    `allennlp predict` (with the plugin, `predictors/allennlp_commands.py`) names each line by
    its file and line number (`load_line_at`); a line given to `load_line` alone is named by
    the count of lines loaded so far (`input line 3`).

    A batch (`predict_batch_json`, which `allennlp predict --batch-size N` calls with N lines at
    a time) is sorted by length and cut into sub-batches wherever padding the lines together
    would cost more than another forward pass (`length_sorted_batches`); the outputs come back
    in input order, the same as for one batch up to floating-point rounding.

    # Parameters

    model : `Model`
    dataset_reader : `DatasetReader`
    frozen : `bool`, optional (default = `True`)
    batch_overhead : `int`, optional (default = `None`)
        What one more forward pass costs, in padded wordpieces, when a batch is cut into
        sub-batches. `None`: 16 on a CPU, where a forward pass costs about as much per
        wordpiece at any batch size; on a GPU the batch is not cut (a forward pass there costs
        about the same for a small batch as for a large one).
    precision : `str`, optional (default = `"float32"`)
        `"bfloat16"`: the forward passes run under `torch.autocast` in bfloat16, the linear
        layers' weights kept in bfloat16 (on a CPU with AVX512-BF16 or AMX the matrix products
        take about half the time; a MiniLM MRPC model's probabilities moved by up to 3e-3 and
        2 labels of 1,000 changed); `"float16"`, on a GPU only, likewise; `"float32"`: none.
        `allennlp predict ... --predictor-args '{"precision": "bfloat16"}'`.
    """

    def __init__(
        self,
        model: Model,
        dataset_reader: DatasetReader,
        frozen: bool = True,
        batch_overhead: Optional[int] = None,
        precision: str = "float32",
    ) -> None:
        super().__init__(model, dataset_reader, frozen)
        self._lines_loaded = 0
        if batch_overhead is None and self.cuda_device < 0:
            batch_overhead = 16
        self._batch_overhead = batch_overhead
        if precision not in PRECISIONS:
            raise ConfigurationError(
                f"precision {precision!r}: not one of {', '.join(PRECISIONS)}."
            )
        if precision == "float16" and self.cuda_device < 0:
            raise ConfigurationError(
                "precision 'float16' needs a GPU (--cuda-device); on a CPU use 'bfloat16'."
            )
        self._autocast_dtype = None if precision == "float32" else getattr(torch, precision)
        if self._autocast_dtype is not None:
            # Outputs computed in the lower precision go back as float32 (numpy has no bfloat16).
            model.register_forward_hook(_float32_outputs)
            # Autocast casts a linear layer's float32 weights at every forward pass (it caches
            # casts only of weights that train, within one autocast region): a third of a
            # one-pair prediction. Kept in the lower precision once, they are what it computes
            # with, cast no more.
            for module in model.modules():
                if isinstance(module, torch.nn.Linear):
                    module.to(self._autocast_dtype)

    def load_line(self, line: str) -> JsonDict:
        self._lines_loaded += 1
        return self.load_line_at(line, f"input line {self._lines_loaded}")

    def load_line_at(self, line: str, where: str) -> JsonDict:
        """The checked record on the line that `where` names in messages (`"pairs.jsonl:5"`)."""
        request = InputRecord.from_line(line, where)
        self._checked(request)
        return request.record

    def _checked(self, request: InputRecord) -> Any:
        raise NotImplementedError

    def predict_instance(self, instance: Instance) -> JsonDict:
        # `allennlp predict --batch-size 1` comes here: the same path as a batch (precision).
        return self.predict_batch_instance([instance])[0]

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        return sanitize(self._forward_in_length_order(instances))

    def _forward_in_length_order(self, instances: List[Instance]) -> List[Dict[str, numpy.ndarray]]:
        """
        The model's outputs for `instances`, in their order, computed in sub-batches of
        instances of similar length (`length_sorted_batches`).
        """
        for instance in instances:
            self._dataset_reader.apply_token_indexers(instance)
        device = "cuda" if self.cuda_device >= 0 else "cpu"
        with torch.autocast(device, self._autocast_dtype, enabled=self._autocast_dtype is not None):
            return self._forward_sorted(instances)

    def _forward_sorted(self, instances: List[Instance]) -> List[Dict[str, numpy.ndarray]]:
        if self._batch_overhead is None:
            return self._model.forward_on_instances(instances)
        lengths = [instance_length(instance) for instance in instances]
        outputs: List[Optional[Dict[str, numpy.ndarray]]] = [None] * len(instances)
        for batch in length_sorted_batches(lengths, self._batch_overhead):
            results = self._model.forward_on_instances([instances[i] for i in batch])
            for index, result in zip(batch, results):
                outputs[index] = result
        return outputs  # type: ignore[return-value]


def _float32_outputs(module: torch.nn.Module, inputs: Any, outputs: Any) -> Any:
    """A model's output dict with every floating-point tensor in float32."""
    if not isinstance(outputs, dict):
        return outputs
    return {
        key: value.float()
        if isinstance(value, torch.Tensor) and value.is_floating_point()
        else value
        for key, value in outputs.items()
    }


def instance_length(instance: Instance) -> int:
    """The number of tokens in `instance`'s text fields: what padding it in a batch costs."""
    return sum(len(field) for field in instance.fields.values() if isinstance(field, TextField))


def length_sorted_batches(
    lengths: Sequence[int], batch_overhead: int, max_batch_size: int = 128
) -> List[List[int]]:
    """
    The positions of `lengths`, sorted by length and cut into batches so that the padded size
    of all batches (each batch's size times its longest length) plus `batch_overhead` per batch
    is least: an exact dynamic programme over the sorted order, each batch at most
    `max_batch_size` long. Ties keep the input order.
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    # best[j]: the least cost of the first j sorted positions; start[j]: where its last
    # batch starts.
    best = [0.0] + [float("inf")] * len(order)
    start = [0] * (len(order) + 1)
    for end in range(1, len(order) + 1):
        longest = lengths[order[end - 1]]
        for first in range(max(0, end - max_batch_size), end):
            cost = best[first] + batch_overhead + (end - first) * longest
            if cost < best[end]:
                best[end], start[end] = cost, first
    batches = []
    end = len(order)
    while end > 0:
        batches.append(order[start[end] : end])
        end = start[end]
    return batches[::-1]
