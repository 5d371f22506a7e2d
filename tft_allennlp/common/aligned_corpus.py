"""
The aligned paraphrase corpus: one JSON object per line, written by `allennlp tft-align`
(`corpus_record`), read by the injection reader and by the aligner's evaluation
(`parse_record`). This module is its only definition:

    {"source": ["A", "man", "is", "playing", "a", "flute", "."],
     "target": ["A", "man", "plays", "the", "flute", "."],
     "source_phrases": [[0, 1], [3, 5], [4, 5], [0, 6]],
     "target_phrases": [[0, 1], [2, 4], [3, 4], [0, 5]],
     "alignments": [[[0, 1], [0, 1]], [[3, 5], [2, 4]], [[4, 5], [3, 4]]]}

- `source`, `target` (required): non-empty lists of non-blank words.
- `source_phrases`, `target_phrases`: each side's phrases, aligned or not, as inclusive
  `[start, end]` word spans with `start <= end`.
- `alignments`: `[source span, target span]` pairs; their spans are added to the phrase lists
  when missing.
- Other keys are ignored: the aligner writes the input's `line`, and its word links as
  `word_links`, `[source word, target word]` pairs, which its evaluation scores.
"""

from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from tft_allennlp.common.input_problems import (
    InputProblems,
    blank_reason,
    decode_line,
    parse_json,
    shown,
)

Span = Tuple[int, int]
"""An inclusive `(start, end)` word span."""
PhrasePair = Tuple[Span, Span]
"""A source span and a target span."""


class AlignedPair(NamedTuple):
    """One valid line of the aligned corpus; spans are word-level and inclusive."""

    line_number: int
    source: List[str]
    target: List[str]
    source_phrases: List[Span]
    target_phrases: List[Span]
    alignments: List[PhrasePair]


def corpus_record(
    source: Sequence[str],
    target: Sequence[str],
    source_phrases: Sequence[Span],
    target_phrases: Sequence[Span],
    alignments: Sequence[PhrasePair],
    **extra: Any,
) -> Dict[str, Any]:
    """The JSON object of one corpus line (`extra` keys, such as `line`, are kept)."""
    return {
        "source": list(source),
        "target": list(target),
        "source_phrases": [list(span) for span in source_phrases],
        "target_phrases": [list(span) for span in target_phrases],
        "alignments": [[list(s), list(t)] for s, t in alignments],
        **extra,
    }


def parse_record(number: int, raw: bytes, problems: InputProblems) -> Optional[AlignedPair]:
    """
    The pair on line `number` (raw bytes as read from the file), or None after reporting the
    problem to `problems` (which raises unless reading is lenient).
    """
    text = decode_line(number, raw, problems)
    if text is None:
        return None
    try:
        return validate_record(number, parse_json(text))
    except ValueError as error:
        problems.reject(number, str(error))
        return None


def validate_record(number: int, record: Any) -> AlignedPair:
    """Checks one JSON record of the corpus; raises `ValueError` with the reason."""
    if not isinstance(record, dict):
        raise ValueError("malformed record: expected a JSON object")
    words: Dict[str, List[str]] = {}
    for side in ("source", "target"):
        value = record.get(side)
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(word, str) and word.strip() for word in value)
        ):
            raise ValueError(f"malformed record: {side!r} must be a non-empty list of words")
        # A word of invisible characters only (a stray control character of the source text)
        # gets no wordpiece, like any character a tokenizer drops, and its phrases none
        # (common/pair_layout.py); a sentence of such words only would leave nothing to encode.
        reason = blank_reason(" ".join(value))
        if reason is not None:
            raise ValueError(f"malformed record: {side!r}: {reason}")
        words[side] = value

    def span(value: Any, side: str, what: str) -> Span:
        return check_span(value, len(words[side]), what, f"{side} words")

    phrases: Dict[str, List[Span]] = {}
    for side in ("source", "target"):
        field = record.get(f"{side}_phrases", [])
        if not isinstance(field, list):
            raise ValueError(f"malformed record: '{side}_phrases' must be a list")
        phrases[side] = [span(value, side, f"{side}_phrases") for value in field]
    alignments_field = record.get("alignments", [])
    if not isinstance(alignments_field, list):
        raise ValueError("malformed record: 'alignments' must be a list")
    alignments: List[PhrasePair] = []
    for value in alignments_field:
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise ValueError(f"malformed alignment: {value!r} is not [source span, target span]")
        alignments.append(
            (span(value[0], "source", "alignment"), span(value[1], "target", "alignment"))
        )
    for side, index in (("source", 0), ("target", 1)):
        phrases[side] = list(dict.fromkeys(phrases[side] + [pair[index] for pair in alignments]))
    return AlignedPair(
        number, words["source"], words["target"], phrases["source"], phrases["target"], alignments
    )


def check_span(value: Any, num_words: int, what: str, words: str = "words") -> Span:
    """
    `value` as an inclusive `(start, end)` word span of a sentence of `num_words` words, or a
    `ValueError` saying what is wrong: not two integers, reversed, or out of range. The one
    check of a span, for the corpus and for the predictors' input.
    """
    if (
        not isinstance(value, (list, tuple))
        or len(value) != 2
        or not all(isinstance(i, int) and not isinstance(i, bool) for i in value)
    ):
        raise ValueError(f"malformed span: {what} {shown(value)} is not [start, end], two integers")
    start, end = value
    if start > end:
        raise ValueError(f"reversed span: {what} [{start}, {end}] has start > end")
    if start < 0 or end >= num_words:
        raise ValueError(f"span out of range: {what} [{start}, {end}] for {num_words} {words}")
    return start, end
