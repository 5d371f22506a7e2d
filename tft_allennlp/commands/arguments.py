"""
Argparse `type=` checks for the subcommands' numeric and JSON arguments, so that a bad value
stops the command with argparse's one-line `error: argument --NAME: ...` (exit code 2) before
any work, instead of a traceback, or a run that does nothing and exits 0.
"""

import argparse
import json
import math
from typing import Any, Callable, Dict


def positive_int(text: str) -> int:
    """An integer of at least 1 (a count: workers, jobs, pairs per batch, characters)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def finite_float(text: str) -> float:
    """A float that is neither NaN nor infinite."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """A finite float above 0 (a duration)."""
    value = finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0, got {text}")
    return value


def float_in(low: float, high: float) -> Callable[[str], float]:
    """The check for a finite float in `[low, high]`."""

    def check(text: str) -> float:
        value = finite_float(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be in [{low:g}, {high:g}], got {text}")
        return value

    return check


def json_object(text: str) -> Dict[str, Any]:
    """A JSON object on the command line: a component's parameters (`{"type": ...}`)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        message = f"invalid JSON: {error.msg} at column {error.colno}"
        raise argparse.ArgumentTypeError(message) from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text!r}")
    return value
