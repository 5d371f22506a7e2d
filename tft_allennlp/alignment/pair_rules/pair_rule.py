"""
Phrase pairs from word links (rules 3-6 of the rule-based aligner, `docs/alignment.md`):
`consistent_pairs` proposes them (rule 3), and registered `PairRule`s, applied in order,
keep some of the multi-word ones (`phrase_pairs`).
"""

from typing import Dict, List, Sequence, Set, Tuple

from allennlp.common import Registrable

from tft_allennlp.alignment.link_rules.link_rule import Link
from tft_allennlp.alignment.parsed_sentence import ParsedSentence
from tft_allennlp.common.aligned_corpus import PhrasePair, Span


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


class PairRule(Registrable):
    """
    Keeps some of the multi-word pairs that rule 3 proposes. An aligner applies its
    `pair_rules` in order; register a subclass and name it there:

        @PairRule.register("my_pair_rule")
        class MyPairRule(PairRule): ...

        allennlp tft-align pairs.tsv aligned.jsonl --include-package my_package --aligner \\
            '{"type": "tft_syntactic", "pair_rules": ["my_pair_rule", "tft_closest_in_length"]}'
    """

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
