"""
Registered rules that link words of a sentence pair (rule 2 of the rule-based aligner,
`docs/alignment.md`), of three kinds: one-to-one `LinkRule`s, taken rank by rank
(`tft_allennlp.alignment.word_linker.WordLinker`); `OneToManyRule`s, which link a word still
unlinked to several words of the other side; and a `SimilarityRule`, which links by the
similarity of contextual vectors. A rule-based aligner names them in its config. The learned
aligner reads some of the one-to-one rules as features.
"""

from tft_allennlp.alignment.link_rules.abbreviation import Abbreviation
from tft_allennlp.alignment.link_rules.acronym import Acronym
from tft_allennlp.alignment.link_rules.link_rule import Link, LinkRule
from tft_allennlp.alignment.link_rules.mutual_similarity import (
    SIMILARITY_THRESHOLD,
    MutualSimilarity,
)
from tft_allennlp.alignment.link_rules.one_to_many_rule import OneToManyRule
from tft_allennlp.alignment.link_rules.same_form import SameForm
from tft_allennlp.alignment.link_rules.same_lemma import SameLemma
from tft_allennlp.alignment.link_rules.same_number import SameNumber
from tft_allennlp.alignment.link_rules.similarity_rule import SimilarityRule
from tft_allennlp.alignment.link_rules.spelling_variant import SpellingVariant
from tft_allennlp.alignment.link_rules.split_word import SplitWord
from tft_allennlp.alignment.link_rules.without_periods import WithoutPeriods
from tft_allennlp.alignment.link_rules.wordnet_synonym import WordNetSynonym
from tft_allennlp.alignment.link_rules.written_out import WrittenOut
