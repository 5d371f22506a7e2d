"""
Tests on how words are written, for the link rules (`tft_allennlp.alignment.link_rules`):
numbers by value, abbreviations, names spelt two ways, forms with periods, symbols written out
and courtesy titles.
"""

import difflib
from typing import Optional

NUMBER_WORDS = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
NUMBER_WORDS.update(
    {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80}
)
NUMBER_WORDS.update({"ninety": 90, "hundred": 100, "thousand": 1000, "million": 10**6})
NUMBER_WORDS["billion"] = 10**9
# Symbols written out as a word: "30.4 %" / "30.4 percent".
WRITTEN_OUT = {"%": "percent"}
# Courtesy titles and abbreviated ranks, without their period: words that stand before a name
# instead of a first name ("Mr Hicks" / "David Hicks").
TITLES = frozenset(
    {"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "rev", "gen", "col", "capt", "lt", "sgt"}
    | {"maj", "adm", "cmdr", "sen", "rep", "gov"}
)


def number_value(word: str) -> Optional[float]:
    """The value of a number written with digits ("10,000", "2.5") or as one word ("four")."""
    text = word.lower().replace(",", "")
    if text in NUMBER_WORDS:
        return float(NUMBER_WORDS[text])
    try:
        return float(text)
    except ValueError:
        return None


def is_abbreviation(word: str, other: str) -> bool:
    """Whether one capitalised word shortens the other, as written abbreviations do: the
    shorter, without a final period, has three or more letters and begins the longer, which has
    two or more letters more; and the shorter ends with a period or has at most four letters
    ("Corp." / "Corporation", "Gen." / "General", "Brig" / "Brigadier"; not the names "Johns" /
    "Johnson", nor "Japan" / "Japanese")."""
    written, longer = sorted((word, other), key=lambda form: len(form.rstrip(".")))
    short, long = written.rstrip("."), longer.rstrip(".")
    return (
        len(short) >= 3
        and (written.endswith(".") or len(short) <= 4)
        and len(long) >= len(short) + 2
        and short.isalpha()
        and long.isalpha()
        and short[0].isupper()
        and long[0].isupper()
        and long.lower().startswith(short.lower())
    )


def is_spelling_variant(word: str, other: str) -> bool:
    """Whether two names are one name spelt two ways, as transliterations are ("Qaeda" /
    "Qaida", "Domecq" / "Domeq", "Zulifquar" / "Zulfiqar"): words of five or more letters with
    the same first letter, neither beginning the other (not "Daniel" / "Daniels", nor "Japan"
    / "Japanese"), whose letters match at 0.8 or more (`difflib`'s ratio: twice the matched
    letters over both lengths)."""
    one, two = word.lower(), other.lower()
    return (
        min(len(one), len(two)) >= 5
        and one.isalpha()
        and two.isalpha()
        and one[0] == two[0]
        and not one.startswith(two)
        and not two.startswith(one)
        and difflib.SequenceMatcher(None, one, two).ratio() >= 0.8
    )


def written_form(word: str) -> str:
    """The lower-cased word, a symbol written out ("%" -> "percent")."""
    return WRITTEN_OUT.get(word, word.lower())


def equal_without_periods(word: str, other: str) -> bool:
    """Whether two words of letters and periods are the same without their periods, in any case
    ("U.S." / "US", "Dr" / "Dr."); numbers are not ("3.5" is not "35")."""
    forms = [form.replace(".", "") for form in (word, other)]
    return all(form.isalpha() for form in forms) and forms[0].lower() == forms[1].lower()


def is_title(word: str) -> bool:
    """A courtesy title or an abbreviated rank, with or without its period ("Mr", "Gen.")."""
    return word.rstrip(".").lower() in TITLES
