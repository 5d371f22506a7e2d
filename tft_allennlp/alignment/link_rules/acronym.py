from typing import List, Optional, Set, Tuple

from tft_allennlp.alignment.link_rules.one_to_many_rule import OneToManyRule
from tft_allennlp.alignment.parsed_sentence import ParsedSentence

# Words that may stand between the capitalised words of a name written out without giving its
# acronym a letter ("Pratt & Whitney" / "P&W", "Federal Bureau of Investigation" / "FBI").
ACRONYM_CONNECTORS = frozenset({"of", "and", "&", "for", "the", "-"})


@OneToManyRule.register("tft_acronym")
class Acronym(OneToManyRule):
    """
    A word in capitals and each capitalised word of the run whose initials it gives ("WHO" /
    "World Health Organization", "N.Y." / "New York", "P&W" / "Pratt & Whitney"); connectors
    (`ACRONYM_CONNECTORS`) may stand between the capitalised words and stay unlinked.

    Registered as a `OneToManyRule` with name "tft_acronym".
    """

    def one_way(
        self,
        one: ParsedSentence,
        other: ParsedSentence,
        one_linked: Set[int],
        other_linked: Set[int],
    ) -> List[Tuple[int, List[int]]]:
        groups = []
        taken = set(other_linked)
        for i, word in enumerate(one.words):
            letters = word.replace(".", "").replace("&", "")
            if i in one_linked or not (2 <= len(letters) <= 6 and letters.isalpha()):
                continue
            if not letters.isupper():  # an acronym is written in capitals
                continue
            run = _initials_run(other, taken, letters)
            if run is not None:
                taken.update(run)
                groups.append((i, run))
        return groups


def _initials_run(sentence: ParsedSentence, linked: Set[int], letters: str) -> Optional[List[int]]:
    """The first run of unlinked capitalised words (connectors between them) whose initials are
    `letters`, as positions of the capitalised words; None when there is none."""

    def capitalised(k: int) -> bool:
        word = sentence.words[k]
        return k not in linked and word[:1].isupper() and word.isalpha() and not word.isupper()

    for start in range(len(sentence.words)):
        if not capitalised(start):
            continue
        run: List[int] = []
        k = start
        while k < len(sentence.words) and len(run) < len(letters):
            if capitalised(k) and sentence.words[k][0] == letters[len(run)]:
                run.append(k)
            elif not (sentence.words[k].lower() in ACRONYM_CONNECTORS and k not in linked):
                break
            k += 1
        if len(run) == len(letters):
            return run
    return None
