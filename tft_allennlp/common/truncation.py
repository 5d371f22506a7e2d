from typing import Tuple


def longest_first(length1: int, length2: int, budget: int) -> Tuple[int, int]:
    """
    The lengths two sequences keep when cut to `budget` items in total by removing items from
    the end of the longer one first (the second one on a tie), as Hugging Face's
    "longest_first" truncation does.
    """
    while length1 + length2 > budget:
        if length1 > length2:
            length1 -= 1
        else:
            length2 -= 1
    return length1, length2
