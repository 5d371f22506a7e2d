"""
`OneToManyRule`, the registrable base of the rules that link one word of a sentence pair to
several words of the other (rule 2 of the rule-based aligner, `docs/alignment.md`).
"""

from typing import List, Set, Tuple

from allennlp.common import Registrable

from tft_allennlp.alignment.link_rules.link_rule import Link
from tft_allennlp.alignment.parsed_sentence import ParsedSentence


class OneToManyRule(Registrable):
    """
    Links a word of one side, still unlinked, to several unlinked words of the other side,
    looked for in both directions. Such links support multi-word pairs but make no single-word
    pair. A rule-based aligner applies its `one_to_many_rules` in order, after the one-to-one
    `LinkRule`s; register a subclass (implementing `one_way`) to name it there.
    """

    def links(
        self,
        source: ParsedSentence,
        target: ParsedSentence,
        linked_source: Set[int],
        linked_target: Set[int],
    ) -> Set[Link]:
        """The rule's links between words not in `linked_source` / `linked_target`; both sets
        are updated with the words it links."""
        found: Set[Link] = set()
        for one, other, one_linked, other_linked, flip in (
            (source, target, linked_source, linked_target, False),
            (target, source, linked_target, linked_source, True),
        ):
            for i, parts in self.one_way(one, other, one_linked, other_linked):
                one_linked.add(i)
                other_linked.update(parts)
                found.update((j, i) if flip else (i, j) for j in parts)
        return found

    def one_way(
        self,
        one: ParsedSentence,
        other: ParsedSentence,
        one_linked: Set[int],
        other_linked: Set[int],
    ) -> List[Tuple[int, List[int]]]:
        """`(word of one, its words of other)` for each link group, words of earlier groups
        counting as linked for later ones."""
        raise NotImplementedError
