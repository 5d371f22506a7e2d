"""
The inputs of `allennlp tft-align`: sentence pairs from a two-column TSV, GLUE's MRPC layout or
JSON lines, streamed with their line numbers.
"""

import collections
import itertools
from typing import Iterator, Optional, Tuple

from tft_allennlp.common.input_problems import InputProblems, blank_reason, parse_json, read_lines

MRPC_HEADER = ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"]
TSV_HEADER = ["sentence1", "sentence2"]

SentencePair = Tuple[int, str, str]


def read_sentence_pairs(
    path: str,
    problems: InputProblems,
    max_sentence_chars: int = 2000,
    mrpc_all_pairs: bool = False,
    counts: Optional[collections.Counter] = None,
) -> Iterator[SentencePair]:
    """
    Yields `(line_number, sentence1, sentence2)` for every valid line of `path`, in order.

    The layout is recognised from the first line: a JSON object (JSON lines with `sentence1`
    and `sentence2`; a line that starts with `{` but holds a tab and is no JSON is a TSV row),
    GLUE's MRPC header (only the pairs labelled 1, paraphrases, unless `mrpc_all_pairs`; the
    others are counted in `counts`), or else a two-column TSV whose first line is a header only
    if it is exactly `sentence1<TAB>sentence2`. Empty sentences (also of invisible characters
    only), wrong column counts, invalid JSON or UTF-8 and sentences over `max_sentence_chars`
    go to `problems`.
    """
    lines = read_lines(path, problems)
    first = next(lines, None)
    if first is None:
        return
    layout = "tsv"
    if _is_json_line(first[1]):
        layout = "jsonl"
    elif first[1].split("\t") == MRPC_HEADER:
        layout = "mrpc"
    if layout == "jsonl" or first[1].split("\t") not in (TSV_HEADER, MRPC_HEADER):
        lines = itertools.chain([first], lines)
    for number, text in lines:
        if not text.strip():
            if layout == "jsonl":
                continue
            problems.reject(number, "empty line")
            continue
        pair = _parse(number, text, layout, problems)
        if pair is None:
            continue
        if layout == "mrpc":
            label, pair = pair[0], pair[1:]
            if label == "0" and not mrpc_all_pairs:
                if counts is not None:
                    counts["MRPC non-paraphrase pairs left out"] += 1
                continue
        for sentence in pair:
            reason = blank_reason(sentence)
            if reason is not None:
                problems.reject(number, reason)
                break
            if len(sentence) > max_sentence_chars:
                problems.reject(
                    number, f"sentence too long: {len(sentence)} characters > {max_sentence_chars}"
                )
                break
        else:
            yield number, pair[0].strip(), pair[1].strip()


def _is_json_line(text: str) -> bool:
    """Whether the first line starts JSON lines rather than a TSV whose first text opens with {."""
    if not text.lstrip().startswith("{"):
        return False
    try:
        parse_json(text)
    except ValueError:
        return "\t" not in text  # a broken JSON line, reported as such
    return True


def _parse(
    number: int, text: str, layout: str, problems: InputProblems
) -> Optional[Tuple[str, ...]]:
    if layout == "jsonl":
        try:
            record = parse_json(text)
        except ValueError as error:
            problems.reject(number, str(error))
            return None
        if not isinstance(record, dict) or not all(
            isinstance(record.get(key), str) for key in ("sentence1", "sentence2")
        ):
            problems.reject(number, "missing column: expected string 'sentence1' and 'sentence2'")
            return None
        return record["sentence1"], record["sentence2"]
    fields = text.split("\t")
    expected = 5 if layout == "mrpc" else 2
    if len(fields) != expected:
        problems.reject(
            number, f"missing column: expected {expected} tab-separated fields, found {len(fields)}"
        )
        return None
    if layout == "mrpc":
        if fields[0] not in ("0", "1"):
            problems.reject(number, f"unknown label: {fields[0]!r}")
            return None
        return fields[0], fields[3], fields[4]
    return fields[0], fields[1]
