"""One test per link rule: the rule on its own, then inside the default aligner's linker
(`CHECKED`) and, where it differs, the basic aligner's (`BASIC`), which lacks most rules."""

import numpy

from tests.alignment.sentences import (
    BASIC,
    CHECKED,
    sentence,
    two_words,
    with_content_check,
)
from tft_allennlp.alignment.link_rules import (
    Abbreviation,
    Acronym,
    MutualSimilarity,
    SameForm,
    SameLemma,
    SameNumber,
    SpellingVariant,
    SplitWord,
    WithoutPeriods,
    WrittenOut,
)
from tft_allennlp.alignment.phrase_aligners import SyntacticBasicPhraseAligner
from tft_allennlp.alignment.word_forms import number_value


def matches(rule, one, other, pos=("NOUN", "NOUN"), lemmas=None):
    """Whether `rule` links the one-word sentences `one` and `other`."""
    source = sentence(one, pos=[pos[0]], lemmas=lemmas and [lemmas[0]])
    target = sentence(other, pos=[pos[1]], lemmas=lemmas and [lemmas[1]])
    return rule.matches(source, 0, target, 0)


def test_same_form_ignores_case_only():
    assert matches(SameForm(), "The", "the") and matches(SameForm(), "U.S.", "u.s.")
    assert not matches(SameForm(), "US", "U.S.") and not matches(SameForm(), "run", "runs")


def test_written_out_reads_a_symbol_as_its_word():
    assert matches(WrittenOut(), "%", "percent") and not matches(WrittenOut(), "%", "per")
    source = sentence("30.4 %", pos=["NUM", "NOUN"], phrases=[(0, 1), (0, 0), (1, 1)])
    assert BASIC.link_words(source, sentence("30.4 percent", pos=["NUM", "NOUN"])) == {(0, 0)}
    percent = sentence("30.4 percent", pos=["NUM", "NOUN"])
    assert CHECKED.link_words(source, percent) == {(0, 0), (1, 1)}
    # Written as two words, "per cent" is a split word (`SplitWord`).
    per_cent = sentence("30.4 per cent", pos=["NUM", "ADP", "NOUN"], phrases=[(0, 2), (0, 0)])
    links = CHECKED.link_words(source, per_cent)
    assert links == {(0, 0), (1, 1), (1, 2)}
    assert ((0, 1), (0, 2)) in with_content_check(source, per_cent, links)


def test_forms_without_periods_are_one_form_but_numbers_are_not():
    rule = WithoutPeriods()
    assert matches(rule, "U.S.", "US") and matches(rule, "Dr", "dr.")
    assert not matches(rule, "3.5", "35")
    source = sentence("U.S. Dr 1 am", pos=["PROPN", "PROPN", "NUM", "NOUN"])
    target = sentence("US Dr. 1 a.m.", pos=["PROPN", "PROPN", "NUM", "NOUN"])
    assert BASIC.link_words(source, target) == {(2, 2)}
    assert CHECKED.link_words(source, target) == {(0, 0), (1, 1), (2, 2), (3, 3)}
    # Numbers link by value only: "3.5" is not "35".
    assert CHECKED.link_words(
        sentence("3.5 percent", pos=["NUM", "NOUN"]),
        sentence("35 percent", pos=["NUM", "NOUN"]),
    ) == {(1, 1)}
    # The pronoun "us" is no content word, so it never links to "U.S.".
    pronoun = sentence("told us", pos=["VERB", "PRON"])
    country = sentence("told U.S.", pos=["VERB", "PROPN"])
    assert CHECKED.link_words(pronoun, country) == {(0, 0)}


def test_numbers_of_the_same_value_are_one_number():
    assert [number_value(word) for word in ("four", "4", "10,000", "2.5", "million", "x")] == [
        4.0,
        4.0,
        10000.0,
        2.5,
        1e6,
        None,
    ]
    assert matches(SameNumber(), "four", "4", pos=("NUM", "NUM"))
    assert not matches(SameNumber(), "four", "4", pos=("NUM", "NOUN"))
    source = two_words("four million", ["NUM", "NUM"])
    target = two_words("4 million", ["NUM", "NUM"])
    assert BASIC.link_words(source, target) == {(1, 1)}
    links = CHECKED.link_words(source, target)
    assert links == {(0, 0), (1, 1)}
    assert ((0, 1), (0, 1)) in with_content_check(source, target, links)


def test_a_lemma_links_words_of_one_kind_only():
    assert matches(SameLemma(), "runs", "ran", pos=("VERB", "VERB"), lemmas=("run", "run"))
    assert matches(SameLemma(same_kind=False), "headed", "head", ("VERB", "NOUN"), ("head",) * 2)
    # The verb "headed" and the noun "head" share a lemma but not a role.
    source = sentence("headed team", lemmas=["head", "team"], pos=["VERB", "NOUN"])
    target = sentence("head team", lemmas=["head", "team"], pos=["NOUN", "NOUN"])
    assert BASIC.link_words(source, target) == {(0, 0), (1, 1)}
    assert CHECKED.link_words(source, target) == {(1, 1)}
    # A verb's "-ing" form and the noun written as the lemma name one activity, either way
    # round; not an inflected noun ("works"), nor another verb form ("worked").
    working = sentence("working team", lemmas=["work", "team"], pos=["VERB", "NOUN"])
    work = sentence("work team", lemmas=["work", "team"], pos=["NOUN", "NOUN"])
    works = sentence("works team", lemmas=["work", "team"], pos=["NOUN", "NOUN"])
    worked = sentence("worked team", lemmas=["work", "team"], pos=["VERB", "NOUN"])
    assert CHECKED.link_words(working, work) == {(0, 0), (1, 1)}
    assert CHECKED.link_words(work, working) == {(0, 0), (1, 1)}
    assert CHECKED.link_words(working, works) == {(1, 1)}
    assert CHECKED.link_words(worked, work) == {(1, 1)}


def test_a_shortened_name_is_its_long_form():
    assert matches(Abbreviation(), "Corp.", "Corporation", pos=("PROPN", "PROPN"))
    source = sentence("the Intel Corp. Gen. Brig", pos=["DET", "PROPN", "PROPN", "PROPN", "PROPN"])
    target = sentence(
        "the Intel Corporation General Brigadier", pos=["DET", "PROPN", "PROPN", "PROPN", "PROPN"]
    )
    assert BASIC.link_words(source, target) == {(1, 1)}
    assert CHECKED.link_words(source, target) == {(1, 1), (2, 2), (3, 3), (4, 4)}
    # Not two letters ("Co." / "Company"), not a word only one letter longer ("Ill." /
    # "Illy"), not in lower case ("corp." / "corporate"), not a different start ("Ltd." /
    # "Limited"), not five letters or more without a period (the names "Johns" / "Johnson").
    for short, long, linked in [
        ("Co.", "Company", False),
        ("Ill.", "Illy", False),
        ("corp.", "corporate", False),
        ("Inc.", "Incorporated", True),
        ("Inc", "Incorporated", True),
        ("Ltd.", "Limited", False),
        ("Johns", "Johnson", False),
        ("Assoc.", "Association", True),
    ]:
        pair = (sentence(short, pos=["PROPN"]), sentence(long, pos=["PROPN"]))
        assert CHECKED.link_words(*pair) == ({(0, 0)} if linked else set()), short


def test_a_name_spelt_two_ways_is_one_name():
    for one, other, linked in [
        ("Qaeda", "Qaida", True),  # 8 of 10 letters matched: 0.8
        ("Domecq", "Domeq", True),
        ("Zulifquar", "Zulfiqar", True),
        ("Daniel", "Daniels", False),  # one begins the other
        ("Kerry", "Berry", False),  # another first letter
        ("Iran", "Iraq", False),  # 0.75
        ("Hassan", "Hussein", False),  # 0.62
    ]:
        assert matches(SpellingVariant(), one, other, pos=("PROPN", "PROPN")) == linked, one
        pair = (sentence(one, pos=["PROPN"]), sentence(other, pos=["PROPN"]))
        assert CHECKED.link_words(*pair) == ({(0, 0)} if linked else set()), one
        assert BASIC.link_words(*pair) == set()
    # Proper nouns only: common nouns spelt alike are other words.
    assert CHECKED.link_words(sentence("cards"), sentence("carts")) == set()


def test_an_acronym_links_to_each_word_it_shortens():
    source = sentence("WHO spokeswoman", pos=["PROPN", "NOUN"], phrases=[(0, 1), (1, 1)])
    target = sentence(
        "World Health Organization spokeswoman",
        pos=["PROPN", "PROPN", "PROPN", "NOUN"],
        phrases=[(0, 2), (0, 3), (3, 3)],
    )
    linked_source, linked_target = {1}, {3}
    assert Acronym().links(source, target, linked_source, linked_target) == {
        (0, 0),
        (0, 1),
        (0, 2),
    }
    assert (linked_source, linked_target) == ({0, 1}, {0, 1, 2, 3})
    assert BASIC.link_words(source, target) == {(1, 3)}
    links = CHECKED.link_words(source, target)
    assert links == {(0, 0), (0, 1), (0, 2), (1, 3)}
    pairs = with_content_check(source, target, links)
    assert ((0, 1), (0, 3)) in pairs and ((1, 1), (3, 3)) in pairs
    # Either way round, with periods in the acronym, and connectors inside the name that give
    # no letter ("Pratt & Whitney", "Bureau of Investigation"); the connectors stay unlinked.
    pos = ["PROPN", "CCONJ", "PROPN"]
    assert CHECKED.link_words(sentence("New York"), sentence("N.Y.")) == {(0, 0), (1, 0)}
    pratt = sentence("Pratt & Whitney", pos=pos)
    assert CHECKED.link_words(sentence("P&W"), pratt) == {(0, 0), (0, 2)}
    fbi = sentence("the Federal Bureau of Investigation", pos=["DET"] + ["PROPN"] * 4)
    assert CHECKED.link_words(sentence("FBI"), fbi) == {(0, 1), (0, 2), (0, 4)}
    # Not in lower case ("who"), not other initials, not a connector at the start, and not
    # without the rule.
    for acronym, name in [
        ("who", "World Health Organization"),
        ("WTO", "World Health Organization"),
        ("OP", "of Pratt"),
    ]:
        assert CHECKED.link_words(sentence(acronym), sentence(name)) == set(), name
    assert BASIC.link_words(sentence("P&W"), pratt) == set()


def test_a_word_written_as_two_links_to_both_parts():
    # "hostnames" / "host names": one word on one side, two adjacent words on the other.
    source = sentence("hostnames using BSD", phrases=[(0, 0), (0, 2), (1, 1), (1, 2), (2, 2)])
    target = sentence(
        "host names using BSD", phrases=[(0, 0), (1, 1), (0, 3), (2, 2), (2, 3), (3, 3)]
    )
    assert SplitWord().links(source, target, {1, 2}, {2, 3}) == {(0, 0), (0, 1)}
    assert BASIC.link_words(source, target) == {(1, 2), (2, 3)}
    links = CHECKED.link_words(source, target)
    assert links == {(0, 0), (0, 1), (1, 2), (2, 3)}
    pairs = with_content_check(source, target, links)
    # The word pair is no single-word pair; the phrases holding all the parts align.
    assert ((0, 0), (0, 0)) not in pairs and ((0, 0), (1, 1)) not in pairs
    assert ((0, 2), (0, 3)) in pairs
    # The other way round, with a hyphen between the parts (linked too, and left out of the
    # form); a part already linked by form keeps its link.
    source = sentence("re - entry began", pos=["NOUN", "PUNCT", "NOUN", "VERB"])
    target = sentence("reentry began")
    assert CHECKED.link_words(source, target) == {(0, 0), (1, 0), (2, 0), (3, 1)}
    source = sentence("entry and re - entry", pos=["NOUN", "CCONJ", "NOUN", "PUNCT", "NOUN"])
    target = sentence("entry reentry")
    assert CHECKED.link_words(source, target) == {(0, 0), (2, 1), (3, 1), (4, 1)}
    # Not across a comma, nor over more than three words.
    source = sentence("host , names", pos=["NOUN", "PUNCT", "NOUN"])
    assert CHECKED.link_words(source, sentence("hostnames")) == set()
    source = sentence("a b c d")
    assert CHECKED.link_words(source, sentence("abcd")) == set()
    assert CHECKED.link_words(source, sentence("abc")) == {(0, 0), (1, 0), (2, 0)}


def test_similarity_links_mutual_best_content_words_above_threshold():
    source = sentence("cutting onion", pos=["VERB", "NOUN"])
    target = sentence("slicing onion", pos=["VERB", "NOUN"])
    similarity = numpy.array([[0.8, 0.1], [0.1, 1.0]])
    assert MutualSimilarity(0.5).links(source, target, set(), {1}, similarity) == {(0, 0)}
    assert BASIC.link_words(source, target, similarity) == {(0, 0), (1, 1)}
    stricter = SyntacticBasicPhraseAligner(similarity_threshold=0.9)
    assert stricter.link_words(source, target, similarity) == {(1, 1)}
    # The default threshold is 0.65: a cosine of 0.6 links only when asked for.
    similarity = numpy.array([[0.6, 0.1], [0.1, 1.0]])
    assert BASIC.link_words(source, target, similarity) == {(1, 1)}
    looser = SyntacticBasicPhraseAligner(similarity_threshold=0.5)
    assert looser.link_words(source, target, similarity) == {(0, 0), (1, 1)}
    # Similar numbers or names never link by similarity in the default aligner.
    people = sentence("Smith left", pos=["PROPN", "VERB"])
    others = sentence("Jones left", pos=["PROPN", "VERB"])
    similarity = numpy.array([[0.9, 0.0], [0.0, 1.0]])
    assert BASIC.link_words(people, others, similarity) == {(0, 0), (1, 1)}
    assert CHECKED.link_words(people, others, similarity) == {(1, 1)}
