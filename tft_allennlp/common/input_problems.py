"""
Reading user files line by line, with every problem reported against its file and line.

Bad input either stops the read with a `MalformedInputError` naming `file:line`, or, when the
user asked for lenient reading, is skipped and counted so that the total can be logged at the
end. Nothing is dropped without a trace.
"""

import collections
import json
import logging
import os
import stat
import unicodedata
from typing import Any, Iterable, Iterator, Optional, Tuple, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Unicode categories that print nothing: format (zero-width space, joiners, BOM, soft hyphen),
# control, unassigned, and separators.
_INVISIBLE = {"Cf", "Cc", "Cn", "Zs", "Zl", "Zp"}


class MalformedInputError(ValueError):
    """
    Raised for a record that cannot be read; the message starts with `file:line:`.
    """


class InputProblems:
    """
    Decides what happens to a bad record of one file, and keeps the count of skipped ones.

    # Parameters

    source : `str`
        The file name used in messages.
    lenient : `bool`, optional (default = `False`)
        If `True`, bad records are skipped and counted by reason; otherwise the first one
        raises a `MalformedInputError`.
    """

    def __init__(self, source: str, lenient: bool = False) -> None:
        self.source = source
        self.lenient = lenient
        self.skipped: collections.Counter = collections.Counter()
        self.num_records = 0

    def reject(self, line_number: int, reason: str) -> None:
        """
        Raises for a bad record, or counts it when reading leniently.
        """
        if not self.lenient:
            raise MalformedInputError(f"{self.source}:{line_number}: {reason}")
        self.skipped[reason.split(":")[0]] += 1
        logger.debug("Skipping %s:%d: %s", self.source, line_number, reason)

    def counted(self, records: Iterable[T]) -> Iterator[T]:
        """Yields `records`, counting them in `num_records` for `require_records`."""
        for record in records:
            self.num_records += 1
            yield record

    def require_records(self, what: str, reason: str) -> None:
        """
        Raises a `MalformedInputError` naming the file when a whole read found no valid `what`
        ("rows", "lines"): `reason` says why a strict read found none; a lenient read that
        skipped every record says so, and how many it skipped. A training, validation or
        evaluation set without a single example is a mistake, never a metric of 0.0.
        """
        if self.num_records:
            return
        if self.num_skipped:
            reasons = ", ".join(f"{count} {reason}" for reason, count in self.skipped.most_common())
            raise MalformedInputError(
                f"{self.source}: no valid {what}: all {self.num_skipped} were malformed and "
                f"skipped by lenient reading ({reasons})"
            )
        raise MalformedInputError(f"{self.source}: no {what} to read: {reason}")

    @property
    def num_skipped(self) -> int:
        return sum(self.skipped.values())

    def log_summary(self, what: str = "records") -> None:
        """
        Logs how many records were skipped, and why; silent when none were.
        """
        if self.skipped:
            reasons = ", ".join(f"{count} {reason}" for reason, count in self.skipped.most_common())
            logger.warning(
                "Skipped %d malformed %s of %s (lenient reading): %s",
                self.num_skipped,
                what,
                self.source,
                reasons,
            )


def read_lines(
    path: str, problems: InputProblems, max_line_chars: Optional[int] = None
) -> Iterator[Tuple[int, str]]:
    """
    Streams a UTF-8 text file as `(line_number, text)` pairs, line numbers starting at 1 and
    line endings removed; lines that `decode_line` rejects are left out.
    """
    for line_number, raw in read_raw_lines(path):
        text = decode_line(line_number, raw, problems, max_line_chars)
        if text is not None:
            yield line_number, text


def read_raw_lines(path: str) -> Iterator[Tuple[int, bytes]]:
    """
    Streams a file as `(line_number, bytes)` pairs, for readers that decode lines later. A path
    that is not a regular file (a named pipe, a device, a socket) is a `MalformedInputError`
    before it is opened: opening a pipe waits for a writer, reading a device may never end,
    and the readers read their files more than once (counting, subsampling), which a pipe
    cannot give.
    """
    check_regular_file(path)
    with open(path, "rb") as handle:
        yield from enumerate(handle, start=1)


def check_regular_file(path: str) -> None:
    """
    A `MalformedInputError` naming `path` if it is a special file: a named pipe, a device, a
    socket (a directory or a missing path is left to `open`, which names it).
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # `open` names the problem
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return  # `open` names a directory itself
    kinds = {
        stat.S_ISFIFO: "a named pipe",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
        stat.S_ISSOCK: "a socket",
    }
    kind = next((name for test, name in kinds.items() if test(mode)), "a special file")
    raise MalformedInputError(
        f"{path}: not a regular file ({kind}); the input is read more than once: save it to a "
        "file first"
    )


def decode_line(
    line_number: int, raw: bytes, problems: InputProblems, max_line_chars: Optional[int] = None
) -> Optional[str]:
    """
    The text of one line without its line ending, or None after reporting it to `problems`:
    invalid UTF-8, or longer than `max_line_chars`. A UTF-8 byte-order mark at the start of
    line 1 is dropped (GLUE's MRPC files have one).
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        problems.reject(line_number, f"invalid UTF-8: {error.reason} at byte {error.start}")
        return None
    if line_number == 1 and text.startswith("\ufeff"):
        text = text[1:]
    text = text.rstrip("\r\n")
    if "\r" in text:
        # A file with classic Mac (CR) line endings reads as one line; never as data.
        problems.reject(
            line_number,
            "carriage return inside the line: lines must end in LF or CRLF, not CR alone",
        )
        return None
    if max_line_chars is not None and len(text) > max_line_chars:
        problems.reject(line_number, f"line too long: {len(text)} characters > {max_line_chars}")
        return None
    return text


def blank_reason(text: str) -> Optional[str]:
    """
    None for text with a visible character; otherwise why it is blank: empty, white space, or
    only characters that print nothing (zero-width spaces, joiners, byte-order marks, soft
    hyphens, control characters), which tokenizers drop, leaving no wordpiece.
    """
    if not text.strip():
        return "empty sentence"
    # Stops at the first visible character (usually the first).
    if any(not char.isspace() and unicodedata.category(char) not in _INVISIBLE for char in text):
        return None
    invisible = [char for char in text if not char.isspace()]
    names = sorted({f"U+{ord(char):04X}" for char in invisible})
    return f"empty sentence: only invisible characters ({', '.join(names[:3])})"


def parse_json(text: str) -> Any:
    """The JSON value of one line; `ValueError` with the readers' wording if it is not JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"invalid JSON: {error.msg} at column {error.colno}") from None


def shown(value: Any, limit: int = 40) -> str:
    """`value` as JSON on one line, cut to about `limit` characters, for messages."""
    text = json.dumps(value, default=repr)
    return text if len(text) <= limit else text[: limit - 3] + "..."
