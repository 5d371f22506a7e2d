from typing import Dict, List, Sequence, Set

from tft_allennlp.alignment.link_rules.link_rule import Link
from tft_allennlp.alignment.pair_rules.pair_rule import PairRule
from tft_allennlp.alignment.parsed_sentence import ParsedSentence
from tft_allennlp.common.aligned_corpus import PhrasePair, Span


@PairRule.register("tft_closest_in_length")
class ClosestInLength(PairRule):
    """
    Rule 6: a phrase keeps only the partners closest to it in length, and a pair is kept only
    when each side is among the other's closest.

    Registered as a `PairRule` with name "tft_closest_in_length".
    """

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
