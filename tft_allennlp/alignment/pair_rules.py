"""
Phrase pairs from word links (rules 3-6 of the rule-based aligner, `docs/alignment.md`):
`consistent_pairs` proposes them (rule 3), and named `PairRule`s, applied in order, keep some of
the multi-word ones.
"""

from typing import Dict, FrozenSet, List, Sequence, Set, Tuple

from tft_allennlp.alignment.link_rules import Link
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


def consistent_pairs(
    source: ParsedSentence, target: ParsedSentence, links: Set[Link]
) -> Tuple[List[PhrasePair], List[PhrasePair]]:
    """
    Rule 3: a source and a target phrase align when both are single words or both are
    multi-word phrases, at least one link lies inside the pair, and the pair is consistent: no
    word inside either phrase is linked to a word outside the other. A single-word pair needs
    its link to be one-to-one. Returns the single-word pairs and the multi-word ones.
    """
    source_links: Dict[int, Set[int]] = {}
    target_links: Dict[int, Set[int]] = {}
    for i, j in links:
        source_links.setdefault(i, set()).add(j)
        target_links.setdefault(j, set()).add(i)

    def consistent(source_span: Span, target_span: Span) -> bool:
        for i in range(source_span[0], source_span[1] + 1):
            if any(not target_span[0] <= j <= target_span[1] for j in source_links.get(i, ())):
                return False
        for j in range(target_span[0], target_span[1] + 1):
            if any(not source_span[0] <= i <= source_span[1] for i in target_links.get(j, ())):
                return False
        return True

    source_phrases, target_phrases = set(source.phrases), set(target.phrases)
    singles: List[PhrasePair] = [
        ((i, i), (j, j))
        for i, j in links
        if (i, i) in source_phrases
        and (j, j) in target_phrases
        and source_links[i] == {j}  # one-to-one
        and target_links[j] == {i}
    ]
    multi: List[PhrasePair] = []
    source_multi = [span for span in source.phrases if span[1] > span[0]]
    target_multi = [span for span in target.phrases if span[1] > span[0]]
    for source_span in source_multi:
        for target_span in target_multi:
            supported = any(
                source_span[0] <= i <= source_span[1] and target_span[0] <= j <= target_span[1]
                for i, j in links
            )
            if supported and consistent(source_span, target_span):
                multi.append((source_span, target_span))
    return singles, multi


class PairRule:
    """Keeps some of the multi-word pairs that rule 3 proposes."""

    name = ""

    def keep(
        self,
        source: ParsedSentence,
        target: ParsedSentence,
        links: Set[Link],
        pairs: Sequence[PhrasePair],
    ) -> List[PhrasePair]:
        raise NotImplementedError


def phrase_pairs(
    source: ParsedSentence,
    target: ParsedSentence,
    links: Set[Link],
    rules: Sequence[PairRule] = (),
) -> List[PhrasePair]:
    """The pairs of rule 3, the multi-word ones kept by each of `rules` in turn, sorted."""
    singles, multi = consistent_pairs(source, target, links)
    for rule in rules:
        multi = rule.keep(source, target, links, multi)
    return sorted(singles + multi)


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
    """

    name = "same_content"

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


class TightestSpans(PairRule):
    """
    Rule 5, one span per region. Pairs with the same links inside them cover the same region;
    the tightest of them are kept (no other pair of the group lies inside them), and a wider one
    only when the words it adds are the same on both sides, any preposition counting as the same
    ("in the park" / "in the park" and "in the park" / "through the park" besides "the park" /
    "the park", but not "in the park" / "the park").
    """

    name = "tightest_spans"

    def keep(
        self,
        source: ParsedSentence,
        target: ParsedSentence,
        links: Set[Link],
        pairs: Sequence[PhrasePair],
    ) -> List[PhrasePair]:
        def inside(pair: PhrasePair) -> FrozenSet[Link]:
            (s0, s1), (t0, t1) = pair
            return frozenset((i, j) for i, j in links if s0 <= i <= s1 and t0 <= j <= t1)

        groups: Dict[FrozenSet[Link], List[PhrasePair]] = {}
        for pair in pairs:
            groups.setdefault(inside(pair), []).append(pair)
        kept: List[PhrasePair] = []
        for group in groups.values():
            chosen: List[PhrasePair] = []
            # Tightest first: a pair is compared with the kept pairs inside it.
            for pair in sorted(group, key=lambda p: (p[0][1] - p[0][0]) + (p[1][1] - p[1][0])):
                nested = [
                    other
                    for other in chosen
                    if pair[0][0] <= other[0][0] <= other[0][1] <= pair[0][1]
                    and pair[1][0] <= other[1][0] <= other[1][1] <= pair[1][1]
                ]
                if all(
                    _added(source, pair[0], other[0]) == _added(target, pair[1], other[1])
                    for other in nested
                ):
                    chosen.append(pair)
            kept.extend(chosen)
        return kept


def _added(sentence: ParsedSentence, wide: Span, tight: Span) -> List[str]:
    """The words `wide` adds to `tight`, any preposition standing as "ADP"."""
    outside = [k for k in range(wide[0], wide[1] + 1) if not tight[0] <= k <= tight[1]]
    return sorted("ADP" if sentence.pos[k] == "ADP" else sentence.words[k].lower() for k in outside)


class ClosestInLength(PairRule):
    """Rule 6: a phrase keeps only the partners closest to it in length, and a pair is kept only
    when each side is among the other's closest."""

    name = "closest_in_length"

    def keep(
        self,
        source: ParsedSentence,
        target: ParsedSentence,
        links: Set[Link],
        pairs: Sequence[PhrasePair],
    ) -> List[PhrasePair]:
        def length(span: Span) -> int:
            return span[1] - span[0] + 1

        best_for_source: Dict[Span, int] = {}
        best_for_target: Dict[Span, int] = {}
        for source_span, target_span in pairs:
            difference = abs(length(source_span) - length(target_span))
            best_for_source[source_span] = min(
                best_for_source.get(source_span, difference), difference
            )
            best_for_target[target_span] = min(
                best_for_target.get(target_span, difference), difference
            )
        return [
            (source_span, target_span)
            for source_span, target_span in pairs
            if abs(length(source_span) - length(target_span))
            == best_for_source[source_span]
            == best_for_target[target_span]
        ]
