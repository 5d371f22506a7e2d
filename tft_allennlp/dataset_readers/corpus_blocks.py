"""
Streaming a line-based corpus in blocks, with a seeded train/validation split and the share of
each block that one distributed rank and one data-loader worker reads.

Lines are dealt out so that every rank reads the same number of lines, within one: the i-th
line of the part goes to rank `i mod world_size`. Blocks go round-robin to the data-loader
workers of each rank. Each worker sees every line of its blocks (a reader draws random partners
from the whole block) but builds instances only for its own lines, so what is read does not
depend on the number of ranks or workers.
"""

import random
from typing import Iterator, List, NamedTuple, Tuple

RawLine = Tuple[int, bytes]
"""A line number (1-based) and the line's undecoded bytes."""


class Block(NamedTuple):
    index: int  # type: ignore[assignment]  # a field, not tuple.index
    """Position of the block in the part, from 0."""
    first: int
    """Position of the block's first line in the part, from 0."""
    lines: List[RawLine]


def in_part(line_number: int, part: str, validation_fraction: float, seed: int) -> bool:
    """
    Whether a line belongs to `part` ("all", "train" or "validation"): a seeded draw per line
    number puts `validation_fraction` of the lines in the validation part.
    """
    if part == "all":
        return True
    draw = random.Random(f"split:{seed}:{line_number}").random()
    return (draw < validation_fraction) == (part == "validation")


def blocks(
    lines: Iterator[RawLine], buffer_size: int, part: str, validation_fraction: float, seed: int
) -> Iterator[Block]:
    """
    The non-blank lines of `part` in blocks of `buffer_size`; a last block of a single line,
    which would have no partner of its own, joins the one before.
    """
    held = None
    current: List[RawLine] = []
    count = 0
    for number, raw in lines:
        if not raw.strip() or not in_part(number, part, validation_fraction, seed):
            continue
        current.append((number, raw))
        count += 1
        if len(current) == buffer_size:
            if held is not None:
                yield held
            index = 0 if held is None else held.index + 1
            held, current = Block(index, count - buffer_size, current), []
    if held is not None and len(current) == 1:
        held, current = Block(held.index, held.first, held.lines + current), []
    if held is not None:
        yield held
    if current:
        yield Block(0 if held is None else held.index + 1, count - len(current), current)


def own_lines(block: Block, rank: int, world_size: int) -> List[bool]:
    """For each line of `block`, whether distributed rank `rank` reads it."""
    return [(block.first + i) % world_size == rank for i in range(len(block.lines))]
