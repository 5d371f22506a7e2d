from typing import Dict, FrozenSet, List, Sequence, Set

from tft_allennlp.alignment.link_rules.link_rule import Link
from tft_allennlp.alignment.pair_rules.pair_rule import PairRule
from tft_allennlp.alignment.parsed_sentence import ParsedSentence
from tft_allennlp.common.aligned_corpus import PhrasePair, Span


@PairRule.register("tft_tightest_spans")
class TightestSpans(PairRule):
    """
    Rule 5, one span per region. Pairs with the same links inside them cover the same region;
    the tightest of them are kept (no other pair of the group lies inside them), and a wider one
    only when the words it adds are the same on both sides, any preposition counting as the same
    ("in the park" / "in the park" and "in the park" / "through the park" besides "the park" /
    "the park", but not "in the park" / "the park").

    Registered as a `PairRule` with name "tft_tightest_spans".
    """

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
