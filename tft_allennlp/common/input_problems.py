"""
Reading user files line by line, with every problem reported against its file and line.

Bad input either stops the read with a `MalformedInputError` naming `file:line`, or, when the
user asked for lenient reading, is skipped and counted so that the total can be logged at the
end. Nothing is dropped without a trace.
"""

import collections
import logging
from typing import Iterator, Optional, Tuple

logger = logging.getLogger(__name__)


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

    def reject(self, line_number: int, reason: str) -> None:
        """
        Raises for a bad record, or counts it when reading leniently.
        """
        if not self.lenient:
            raise MalformedInputError(f"{self.source}:{line_number}: {reason}")
        self.skipped[reason.split(":")[0]] += 1
        logger.debug("Skipping %s:%d: %s", self.source, line_number, reason)

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
    """Streams a file as `(line_number, bytes)` pairs, for readers that decode lines later."""
    with open(path, "rb") as handle:
        yield from enumerate(handle, start=1)


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
    if max_line_chars is not None and len(text) > max_line_chars:
        problems.reject(line_number, f"line too long: {len(text)} characters > {max_line_chars}")
        return None
    return text
