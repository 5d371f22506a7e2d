"""
The injection variants of an experiment grid and their names. A variant is the spec's name of
an injection (`VARIANTS`, or one of the spec's `custom_variants`) and the injection seed it was
injected with (`Variant`); its label, the name of its directories and of its rows in the
report, adds the seed where it is not the grid's first: `tft_iseed2`.
"""

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

# Injection variants: the paper's names (Tables 3-5) -> config in training_configs/injection/;
# "none" fine-tunes the base checkpoint itself.
VARIANTS: Dict[str, Optional[str]] = {
    "none": None,
    "tft": "tft",
    "tft_simple": "tft_simple",
    "+sentence": "sentence_only",
    "+3way-PP": "three_way_pp",
    "+binary-PP": "binary_pp",
}

# What a label adds for an injection seed other than the grid's first: `tft_iseed2`.
SEEDED = "_iseed"


@dataclass(frozen=True)
class Variant:
    """
    A variant of the grid: the spec's `name` of it and its `injection_seed`, None for the
    grid's first injection seed (and for "none", which is not injected).
    """

    name: str
    injection_seed: Optional[int] = None

    @property
    def label(self) -> str:
        """Its name in directories and reports: `tft`, or `tft_iseed2` for seed 2."""
        seed = self.injection_seed
        return self.name if seed is None else f"{self.name}{SEEDED}{seed}"


def split_variant(label: str) -> Tuple[str, Optional[int]]:
    """
    A label of a report's rows back to its variant: `"tft_iseed2"` -> `("tft", 2)`; `"tft"` ->
    `("tft", None)` (the grid's first seed).
    """
    name, separator, seed = label.rpartition(SEEDED)
    if separator and name and seed.isdigit():
        return name, int(seed)
    return label, None
