"""
`SimilarityRule`, the registrable base of the rules that link words of a sentence pair by the
similarity of their vectors (rule 2 of the rule-based aligner, `docs/alignment.md`).
"""

from typing import Set

import numpy
from allennlp.common import Registrable

from tft_allennlp.alignment.link_rules.link_rule import Link
from tft_allennlp.alignment.parsed_sentence import ParsedSentence


class SimilarityRule(Registrable):
    """
    Links words that the lexical rules left unlinked by a `(len(source), len(target))`
    similarity matrix (the cosines of contextual word vectors). A rule-based aligner with
    `embeddings` applies its `similarity_rule` last; register a subclass to name it there.
    """

    def links(
        self,
        source: ParsedSentence,
        target: ParsedSentence,
        linked_source: Set[int],
        linked_target: Set[int],
        similarity: numpy.ndarray,
    ) -> Set[Link]:
        """The rule's links between words not in `linked_source` / `linked_target`; the sets
        are left as they are."""
        raise NotImplementedError
