import re

import pytest
from allennlp.common import Params, Registrable
from allennlp.common.checks import ConfigurationError

from tests.alignment.sentences import CHECKED, show
from tft_allennlp.alignment.link_rules import (
    Abbreviation,
    LinkRule,
    MutualSimilarity,
    SameForm,
    SameLemma,
)
from tft_allennlp.alignment.pair_rules import ClosestInLength, SameContent, TightestSpans
from tft_allennlp.alignment.phrase_aligners import PhraseAligner, SyntacticPhraseAligner


def test_flute_pair_by_hand(pipeline):
    source, target = pipeline.parse_text(["A man is playing a flute.", "A man plays the flute."])
    record = CHECKED.align(source, target)
    assert show(record) == [
        ("A man", "A man"),
        ("man", "man"),
        ("is playing a flute", "plays the flute"),
        ("playing", "plays"),
        ("a flute", "the flute"),
        ("flute", "flute"),
    ]
    # man, playing ~ plays (a lemma), flute.
    assert record["word_links"] == [[1, 1], [3, 2], [5, 4]]


def test_one_span_per_region_and_closest_length(pipeline):
    # Rule 5: "the park" / "the park" covers the region; a wider pair stays where it adds the
    # same words on both sides, a preposition counting as any preposition ("in" / "through").
    texts = ["Two dogs are running in the park.", "Two dogs run through the park."]
    pairs = show(CHECKED.align(*pipeline.parse_text(texts)))
    assert ("the park", "the park") in pairs and ("in the park", "through the park") in pairs
    assert ("in the park", "the park") not in pairs
    # A wider pair that adds the same words on both sides stays.
    texts = ["Two dogs are running in the park.", "Two dogs run in the park."]
    pairs = show(CHECKED.align(*pipeline.parse_text(texts)))
    assert ("in the park", "in the park") in pairs and ("the park", "the park") in pairs
    source, target = pipeline.parse_text(
        ["Prices fell sharply in March.", "In March, prices dropped sharply."]
    )
    assert ("in March", "In March") in show(CHECKED.align(source, target))


def test_deterministic(pipeline):
    texts = ["The river flooded the small town.", "The small town was flooded by the river."]
    first = CHECKED.align(*pipeline.parse_text(texts))
    second = CHECKED.align(*pipeline.parse_text(texts))
    assert first == second


class BritishSpelling(LinkRule):
    """A user's rule: a word spelt the British and the American way ("colour" / "color",
    "organised" / "organized")."""

    @staticmethod
    def american(word):
        return re.sub("our$", "or", re.sub("is(e|ed|es|ing)$", r"iz\1", word.lower()))

    def matches(self, source, i, target, j):
        return self.american(source.words[i]) == self.american(target.words[j])


@pytest.fixture
def british_spelling():
    """`BritishSpelling`, registered as a user registers a rule, for the test only."""
    LinkRule.register("british_spelling")(BritishSpelling)
    yield "british_spelling"
    del Registrable._registry[LinkRule]["british_spelling"]


def test_a_rule_registered_by_name_links_words_where_a_config_names_it(pipeline, british_spelling):
    source, target = pipeline.parse_text(
        ["They organised the colour festival.", "They organized the color festival."]
    )
    # The lemmas differ ("organise" / "organize", "colour" / "color"): only "festival" links.
    assert CHECKED.align(source, target)["word_links"] == [[4, 4]]
    assert show(CHECKED.align(source, target)) == [
        ("the colour festival", "the color festival"),
        ("festival", "festival"),
    ]
    # The registered rule named beside the lemmas, as `--aligner '{...}'` gives it.
    ranks = [list(rank) for rank in SyntacticPhraseAligner.LINK_RULES]
    ranks[1].append(british_spelling)
    config = {"type": "tft_syntactic", "link_rules": ranks}
    aligner = PhraseAligner.from_params(Params(config))
    assert [type(rule) for rule in aligner.linker.ranks[1]] == [
        SameLemma,
        Abbreviation,
        BritishSpelling,
    ]
    record = aligner.align(source, target)
    assert record["word_links"] == [[1, 1], [3, 3], [4, 4]]
    # organised ~ organized and colour ~ color pair as words; the verb phrase now has a link
    # of its own, so it is another region than "the colour festival" and stays (rule 5).
    assert show(record) == [
        ("organised", "organized"),
        ("organised the colour festival", "organized the color festival"),
        ("the colour festival", "the color festival"),
        ("colour", "color"),
        ("festival", "festival"),
    ]


def test_rules_given_by_config_replace_the_defaults_and_refuse_their_shorthands():
    config = {"type": "tft_syntactic", "pair_rules": ["tft_closest_in_length"]}
    aligner = PhraseAligner.from_params(Params(config))
    assert [type(rule) for rule in aligner.pair_rules] == [ClosestInLength]
    assert [type(rule) for rule in CHECKED.pair_rules] == [
        SameContent,
        TightestSpans,
        ClosestInLength,
    ]
    with pytest.raises(ConfigurationError, match='give "link_rules" or "wordnet"'):
        SyntacticPhraseAligner(link_rules=[[SameForm()]], wordnet="installed")
    with pytest.raises(ConfigurationError, match='give "similarity_rule" or'):
        SyntacticPhraseAligner(similarity_rule=MutualSimilarity(), similarity_threshold=0.5)
