from typing import List, Sequence, Set, Tuple

from tft_allennlp.alignment.link_rules.link_rule import Link
from tft_allennlp.alignment.pair_rules.pair_rule import PairRule
from tft_allennlp.alignment.parsed_sentence import (
    CONTENT_POS,
    FORM_ONLY_POS,
    WORD_KINDS,
    ParsedSentence,
)
from tft_allennlp.alignment.word_forms import is_title
from tft_allennlp.common.aligned_corpus import PhrasePair, Span

# Unlinked words that count as content a phrase adds (rule 4), besides polarity words.
SUBSTANTIVE_POS = CONTENT_POS
# Lemmas that turn a statement around (rule 4).
POLARITY_LEMMAS = frozenset(
    {"not", "n't", "no", "never", "without", "against", "neither", "nor", "none", "nobody"}
    | {"nothing", "nowhere"}
)


@PairRule.register("tft_same_content")
class SameContent(PairRule):
    """
    Rule 4. A multi-word pair is dropped when
    - its sides hold different unlinked substantive words by kind (content words, counted as
      nouns, verbs, adjectives, adverbs and numbers, and polarity words such as "not",
      "never", "without", "against"): one side says something the other does not ("to shore" /
      "to reach shore", "against renewing the contract" / "renewing the contract", an extra
      attribution or argument), or something else ("smiling bomber" / "Bali bomber": an
      adjective for a name); a substitution of one kind stays ("fell sharply" / "dropped
      sharply"); or
    - both sides hold an unlinked number, or both an unlinked proper noun: amounts or names that
      differ ("$4,450" / "$4,500", a different person).

    Unlinked proper nouns next to a linked proper noun, in one run of proper nouns, are more
    words of a name both sides share and add no content ("Merrill 's" / "Merrill Lynch 's",
    "the Cubs" / "the Chicago Cubs"), as long as the other side has no unlinked proper noun. A
    courtesy title or rank (`tft_allennlp.alignment.word_forms.TITLES`) in such a run is a word
    of the name that stands for a first name ("Mr Hicks" / "David Hicks"), but unlinked titles
    on both sides are two people ("Mr. Smith" / "Mrs. Smith").

    Registered as a `PairRule` with name "tft_same_content".
    """

    def keep(
        self,
        source: ParsedSentence,
        target: ParsedSentence,
        links: Set[Link],
        pairs: Sequence[PhrasePair],
    ) -> List[PhrasePair]:
        linked = ({i for i, _ in links}, {j for _, j in links})
        return [pair for pair in pairs if self.same_content(source, target, linked, pair)]

    @staticmethod
    def same_content(
        source: ParsedSentence,
        target: ParsedSentence,
        linked: Tuple[Set[int], Set[int]],
        pair: PhrasePair,
    ) -> bool:
        """The same kinds of unlinked substantive words on both sides, and no unlinked number or
        proper noun on both sides; `linked`: the linked words of each side."""
        linked_source, linked_target = linked
        kinds, facts, titles = [], [], []
        for sentence, span, side in (
            (source, pair[0], linked_source),
            (target, pair[1], linked_target),
        ):
            # Words of a name whose other words are linked add no content ("Merrill 's" /
            # "Merrill Lynch 's"), unless both sides hold such words (the facts check below).
            names = _name_parts(sentence, span, side)
            unlinked = [k for k in range(span[0], span[1] + 1) if k not in side]
            # A title before a name is no fact of its own ("Mr Hicks" / "David Hicks"), but two
            # different titles are ("Mr. Smith" / "Mrs. Smith").
            unlinked_titles = {k for k in unlinked if is_title(sentence.words[k])}
            titles.append(bool(unlinked_titles))
            facts.append(
                {sentence.pos[k] for k in unlinked if k not in unlinked_titles} & FORM_ONLY_POS
            )
            unlinked = [k for k in unlinked if k not in names]
            kinds.append(
                sorted(
                    "polarity"
                    if sentence.lemmas[k] in POLARITY_LEMMAS
                    else WORD_KINDS[sentence.pos[k]]
                    for k in unlinked
                    if sentence.pos[k] in SUBSTANTIVE_POS or sentence.lemmas[k] in POLARITY_LEMMAS
                )
            )
        # Both sides with an unlinked number (or proper noun): amounts (names) that differ.
        return kinds[0] == kinds[1] and not facts[0] & facts[1] and not (titles[0] and titles[1])


def _name_parts(sentence: ParsedSentence, span: Span, linked: Set[int]) -> Set[int]:
    """The unlinked proper nouns of `span` that stand in one run of adjacent proper nouns (and
    titles) with a linked proper noun: further words of a name that is linked ("Lynch" of
    "Merrill Lynch", "Mr" of "Mr Hicks")."""
    parts: Set[int] = set()
    start = span[0]
    while start <= span[1]:
        end = start
        while end <= span[1] and (sentence.pos[end] == "PROPN" or is_title(sentence.words[end])):
            end += 1
        run = range(start, end)
        if any(k in linked for k in run):
            parts.update(k for k in run if k not in linked)
        start = end + 1
    return parts
