"""
Word links of a sentence pair from ranked link rules (rule 2 of the rule-based aligner,
`docs/alignment.md`).
"""

from typing import List, Optional, Sequence, Set, Tuple

import numpy

from tft_allennlp.alignment.link_rules import Link, LinkRule, OneToManyRule, SimilarityRule
from tft_allennlp.alignment.parsed_sentence import CONTENT_POS, ParsedSentence


class WordLinker:
    """
    Links content words only (identical function words such as "the" are too frequent to be
    evidence, and linking them across reordered phrases would make correct phrase pairs
    inconsistent), in three steps:

    1. One-to-one, rank by rank: the content-word pairs that a rule of the first rank matches
       are taken greedily by closeness of relative position (so repeated words link in order),
       then those of the next rank among the words still unlinked, and so on.
    2. Each one-to-many rule, in order, among the words still unlinked.
    3. With a similarity matrix, `similarity` among the content words still unlinked.

    # Parameters

    ranks : `Sequence[Sequence[LinkRule]]`
        The one-to-one rules, strongest evidence first.
    one_to_many : `Sequence[OneToManyRule]`, optional (default = `()`)
    similarity : `SimilarityRule`, optional (default = `None`)
        How a similarity matrix links, when `link` is given one; a matrix given without it is
        an error.
    """

    def __init__(
        self,
        ranks: Sequence[Sequence[LinkRule]],
        one_to_many: Sequence[OneToManyRule] = (),
        similarity: Optional[SimilarityRule] = None,
    ) -> None:
        self.ranks = [list(rank) for rank in ranks]
        self.one_to_many = list(one_to_many)
        self.similarity = similarity

    def link(
        self,
        source: ParsedSentence,
        target: ParsedSentence,
        similarity: Optional[numpy.ndarray] = None,
    ) -> Set[Link]:
        """The links of the pair; `similarity` is a `(len(source), len(target))` matrix."""
        links: Set[Link] = set()
        linked_source: Set[int] = set()
        linked_target: Set[int] = set()
        for rank in self.ranks:
            for _, i, j in sorted(
                self._candidates(source, target, rank, linked_source, linked_target)
            ):
                if i not in linked_source and j not in linked_target:
                    links.add((i, j))
                    linked_source.add(i)
                    linked_target.add(j)
        for rule in self.one_to_many:
            links |= rule.links(source, target, linked_source, linked_target)
        if similarity is not None:
            if self.similarity is None:
                raise ValueError(
                    "a similarity matrix was given to a linker without a similarity rule"
                )
            links |= self.similarity.links(source, target, linked_source, linked_target, similarity)
        return links

    @staticmethod
    def _candidates(
        source: ParsedSentence,
        target: ParsedSentence,
        rules: List[LinkRule],
        linked_source: Set[int],
        linked_target: Set[int],
    ) -> List[Tuple[float, int, int]]:
        """`(distance in relative position, i, j)` of each unlinked content-word pair that one of
        `rules` matches."""
        found = []
        for i, tag in enumerate(source.pos):
            if tag not in CONTENT_POS or i in linked_source:
                continue
            for j, other_tag in enumerate(target.pos):
                if other_tag not in CONTENT_POS or j in linked_target:
                    continue
                if any(rule.matches(source, i, target, j) for rule in rules):
                    distance = abs(i / len(source.words) - j / len(target.words))
                    found.append((distance, i, j))
        return found
