from typing import List, Optional

from tft_allennlp.alignment.link_rules import (
    SIMILARITY_THRESHOLD,
    LinkRule,
    MutualSimilarity,
    SameForm,
    SameLemma,
    WordNetSynonym,
)
from tft_allennlp.alignment.pair_rules import ClosestInLength, PairRule
from tft_allennlp.alignment.phrase_aligners.phrase_aligner import PhraseAligner
from tft_allennlp.alignment.phrase_aligners.syntactic_phrase_aligner import SyntacticPhraseAligner
from tft_allennlp.alignment.word_linker import WordLinker
from tft_allennlp.alignment.wordnet import WordNet


@PhraseAligner.register("tft_syntactic_basic")
class SyntacticBasicPhraseAligner(SyntacticPhraseAligner):
    """
    The rule-based aligner with its basic rules only: words link by form, then by lemma (of any
    kind), then optionally by WordNet synonymy and similarity (names and numbers too); a phrase
    pair needs only to be consistent with the links and the closest in length (rules 1-3 and
    6). It finds more pairs than `tft_syntactic`, fewer of them correct; the corpora of the
    project's published experiments were aligned with it.

    Registered as a `PhraseAligner` with name "tft_syntactic_basic"; its parameters are those of
    `tft_syntactic`.
    """

    @staticmethod
    def word_linker(
        wordnet: Optional[WordNet] = None, similarity_threshold: float = SIMILARITY_THRESHOLD
    ) -> WordLinker:
        """The same form; the same lemma; WordNet synonyms; then similarity."""
        ranks: List[List[LinkRule]] = [[SameForm()], [SameLemma(same_kind=False)]]
        if wordnet is not None:
            ranks.append([WordNetSynonym(wordnet)])
        return WordLinker(
            ranks, similarity=MutualSimilarity(similarity_threshold, names_by_form=False)
        )

    @staticmethod
    def phrase_pair_rules() -> List[PairRule]:
        """Rule 6 only."""
        return [ClosestInLength()]
