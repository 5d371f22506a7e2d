from typing import Any, ClassVar, Dict, List

from tft_allennlp.alignment.phrase_aligners.phrase_aligner import PhraseAligner, RuleConfig
from tft_allennlp.alignment.phrase_aligners.syntactic_phrase_aligner import SyntacticPhraseAligner


@PhraseAligner.register("tft_syntactic_basic")
class SyntacticBasicPhraseAligner(SyntacticPhraseAligner):
    """
    The rule-based aligner with its basic rules only: words link by form, then by lemma (of any
    kind), then optionally by WordNet synonymy and similarity (names and numbers too); a phrase
    pair needs only to be consistent with the links and the closest in length (rules 1-3 and
    6). It finds more pairs than `tft_syntactic`, fewer of them correct; the corpora of the
    project's published experiments were aligned with it.

    Registered as a `PhraseAligner` with name "tft_syntactic_basic"; its parameters are those of
    `tft_syntactic`, with other default rules.
    """

    LINK_RULES: ClassVar[List[List[RuleConfig]]] = [
        ["tft_same_form"],
        [{"type": "tft_same_lemma", "same_kind": False}],
    ]
    ONE_TO_MANY_RULES: ClassVar[List[RuleConfig]] = []
    SIMILARITY_RULE: ClassVar[Dict[str, Any]] = {
        "type": "tft_mutual_similarity",
        "names_by_form": False,
    }
    PAIR_RULES: ClassVar[List[RuleConfig]] = ["tft_closest_in_length"]

    @classmethod
    def link_ranks(cls, synonyms: List[RuleConfig]) -> List[List[RuleConfig]]:
        """`LINK_RULES`, then `synonyms` (the WordNet rule that `wordnet` stands for) in a rank
        of its own."""
        return cls.LINK_RULES + ([synonyms] if synonyms else [])
