"""
Which pairs of an aligned corpus a page shows: the first N valid lines, or N drawn uniformly at
random (seeded) from the whole file, in file order either way.
"""

import random
from typing import List, NamedTuple, Optional

from allennlp.common.checks import ConfigurationError

from tft_allennlp.common.aligned_corpus import AlignedPair, parse_record
from tft_allennlp.common.input_problems import InputProblems, check_regular_file, read_raw_lines


class ShownPairs(NamedTuple):
    pairs: List[AlignedPair]
    """The pairs to show, in file order."""
    read: Optional[int]
    """How many valid pairs the file holds; None when reading stopped at the first N."""


def read_shown_pairs(path: str, limit: int, seed: Optional[int] = None) -> ShownPairs:
    """
    The pairs of the aligned corpus `path` (`tft_allennlp.common.aligned_corpus`) to show: with
    `seed` None, the first `limit` valid lines; otherwise `limit` lines drawn uniformly from all
    of them by a `random.Random(seed)` (reservoir sampling: the file is streamed once, never
    loaded), which reads and checks every line. A malformed line is a `MalformedInputError`
    naming `file:line`, and so is a file without a single pair; a file that cannot be opened is
    a `ConfigurationError` naming it.
    """
    check_readable(path)
    problems = InputProblems(path)
    rng = random.Random(seed) if seed is not None else None
    chosen: List[AlignedPair] = []
    read = 0
    for number, raw in read_raw_lines(path):
        if not raw.strip():
            continue
        pair = parse_record(number, raw, problems)
        assert pair is not None  # a strict read raises on a bad line
        read += 1
        problems.num_records = read
        if len(chosen) < limit:
            chosen.append(pair)
            if rng is None and len(chosen) == limit:
                return ShownPairs(chosen, None)
        elif rng is not None:
            slot = rng.randrange(read)
            if slot < limit:
                chosen[slot] = pair
    problems.require_records("aligned pairs", "the file has no non-blank lines")
    chosen.sort(key=lambda pair: pair.line_number)
    return ShownPairs(chosen, read)


def check_readable(path: str) -> None:
    """A `ConfigurationError` naming `path` unless it is a regular file that can be opened."""
    check_regular_file(path)  # before `open`, which waits on a named pipe for a writer
    try:
        open(path, "rb").close()
    except OSError as error:
        raise ConfigurationError(f"{path}: {error.strerror}") from None
