from typing import Dict, List, Set, Tuple

from tft_allennlp.alignment.link_rules.one_to_many_rule import OneToManyRule
from tft_allennlp.alignment.parsed_sentence import CONTENT_POS, ParsedSentence
from tft_allennlp.alignment.word_forms import written_form


@OneToManyRule.register("tft_split_word")
class SplitWord(OneToManyRule):
    """
    A content word and each of the two or three adjacent words it is written as on the other
    side ("hostnames" / "host names", "reentry" / "re - entry": hyphens between the parts are
    parts too; "%" / "per cent").

    Registered as a `OneToManyRule` with name "tft_split_word".
    """

    def one_way(
        self,
        one: ParsedSentence,
        other: ParsedSentence,
        one_linked: Set[int],
        other_linked: Set[int],
    ) -> List[Tuple[int, List[int]]]:
        forms = _split_forms(other, other_linked)
        groups = []
        taken = set(other_linked)
        for i, (word, tag) in enumerate(zip(one.words, one.pos)):
            parts = forms.get(written_form(word))  # "%" / "per cent" too
            if tag not in CONTENT_POS or i in one_linked or parts is None:
                continue
            if any(part in taken for part in parts):
                continue  # a part taken by an earlier split word
            taken.update(parts)
            groups.append((i, parts))
        return groups


def _split_forms(sentence: ParsedSentence, linked: Set[int]) -> Dict[str, List[int]]:
    """Concatenated lower-cased form -> the parts' positions, for each run of 2-3 unlinked words
    (hyphens between them are parts too, left out of the form)."""
    found: Dict[str, List[int]] = {}
    for start in range(len(sentence.words)):
        parts: List[int] = []
        pieces: List[str] = []
        for k in range(start, len(sentence.words)):
            word = sentence.words[k]
            if k in linked or (word != "-" and sentence.pos[k] == "PUNCT"):
                break
            if word == "-" and (not pieces or sentence.words[parts[-1]] == "-"):
                break  # a hyphen only between two words
            parts.append(k)
            if word != "-":
                pieces.append(word.lower())
                if len(pieces) >= 2:
                    found.setdefault("".join(pieces), parts[:])
                if len(pieces) == 3:
                    break
    return found
