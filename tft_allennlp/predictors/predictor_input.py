"""
One JSON input of a predictor, parsed and checked field by field, so that a bad line stops
`allennlp predict` with a one-line `MalformedInputError` naming it, in the readers' style
(`input line 3: 'sentence2' must be non-empty text, not ""`), before anything is predicted
for it and before it can fail deep inside the tokenizer or the model.
"""

from typing import Any, List, NoReturn, Sequence, Union

from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader
from allennlp.models import Model
from allennlp.predictors.predictor import Predictor

from tft_allennlp.common.aligned_corpus import PhrasePair, Span, check_span
from tft_allennlp.common.input_problems import (
    MalformedInputError,
    blank_reason,
    parse_json,
    shown,
)


class InputRecord:
    """
    A JSON object given to a predictor, with getters that return a field only when a model can
    take it, and otherwise raise a `MalformedInputError` saying where and what is wrong.

    # Parameters

    record : `Any`
        The parsed JSON value; anything but an object is rejected.
    where : `str`, optional (default = `"input"`)
        Where the record came from, the start of every message: `"input line 3"` for a line
        read by `from_line`, `"input"` for a dictionary given to `predict_json`.
    """

    def __init__(self, record: Any, where: str = "input") -> None:
        self.where = where
        if not isinstance(record, dict):
            self.reject(f"expected a JSON object, not {shown(record)}")
        self.record: JsonDict = record

    @classmethod
    def from_line(cls, line: str, number: int) -> "InputRecord":
        """
        The record on the `number`-th input line. `allennlp predict` skips blank lines, so
        `number` counts the JSON lines it passes to `Predictor.load_line`, from 1.
        """
        where = f"input line {number}"
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


class LineCheckingPredictor(Predictor):
    """
    A predictor that checks each input line as it loads it, so that a bad line stops
    `allennlp predict` with a `MalformedInputError` naming it before anything is predicted for
    it. Subclasses implement `_checked(record)`, the same check `_json_to_instance` applies.
    Lines are numbered from 1 in the order they are loaded: `allennlp predict` skips blank
    lines, so the number counts the JSON lines it passes.
    """

    def __init__(self, model: Model, dataset_reader: DatasetReader, frozen: bool = True) -> None:
        super().__init__(model, dataset_reader, frozen)
        self._lines_loaded = 0

    def load_line(self, line: str) -> JsonDict:
        self._lines_loaded += 1
        request = InputRecord.from_line(line, self._lines_loaded)
        self._checked(request)
        return request.record

    def _checked(self, request: InputRecord) -> Any:
        raise NotImplementedError
