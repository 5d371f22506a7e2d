from typing import Set

import numpy

from tft_allennlp.alignment.link_rules.link_rule import Link
from tft_allennlp.alignment.link_rules.similarity_rule import SimilarityRule
from tft_allennlp.alignment.parsed_sentence import CONTENT_POS, FORM_ONLY_POS, ParsedSentence

# The least cosine of a similarity link. 0.65 is the lowest threshold whose pairs were judged
# correct at 0.85 or more on the development samples of research/results/alignment_eval (0.5
# before: 0.78 there); held out, 0.87 against 0.79, with 0.89 as many correct pairs.
SIMILARITY_THRESHOLD = 0.65


@SimilarityRule.register("tft_mutual_similarity")
class MutualSimilarity(SimilarityRule):
    """
    Content words still unlinked, each the other's most similar word among them, linked when
    their similarity (the cosine of contextual vectors) reaches `threshold`.

    Registered as a `SimilarityRule` with name "tft_mutual_similarity".

    # Parameters

    threshold : `float`, optional (default = `0.65`)
    names_by_form : `bool`, optional (default = `True`)
        Two numbers, or two proper nouns, never link by similarity ("$4,450" is not "$4,500").
    """

    def __init__(self, threshold: float = SIMILARITY_THRESHOLD, names_by_form: bool = True) -> None:
        self.threshold = threshold
        self.names_by_form = names_by_form

    def links(
        self,
        source: ParsedSentence,
        target: ParsedSentence,
        linked_source: Set[int],
        linked_target: Set[int],
        similarity: numpy.ndarray,
    ) -> Set[Link]:
        free_source = [
            i for i, tag in enumerate(source.pos) if i not in linked_source and tag in CONTENT_POS
        ]
        free_target = [
            j for j, tag in enumerate(target.pos) if j not in linked_target and tag in CONTENT_POS
        ]
        links: Set[Link] = set()
        if not free_source or not free_target:
            return links
        block = similarity[numpy.ix_(free_source, free_target)]
        for row, i in enumerate(free_source):
            column = int(block[row].argmax())
            j = free_target[column]
            both_facts = source.pos[i] == target.pos[j] and source.pos[i] in FORM_ONLY_POS
            if (
                int(block[:, column].argmax()) == row
                and block[row, column] >= self.threshold
                and not (self.names_by_form and both_facts)
            ):
                links.add((i, j))
        return links
