from tests.alignment.sentences import BASIC, CHECKED, sentence, two_words, with_content_check
from tft_allennlp.alignment.pair_rules import (
    ClosestInLength,
    SameContent,
    TightestSpans,
    consistent_pairs,
)


def test_consistent_pairs_need_a_link_inside_and_none_leaving():
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
    links = BASIC.link_words(source, target)
    assert links == {(1, 0), (2, 1)}
    singles, multi = consistent_pairs(source, target, links)
    assert sorted(singles) == [((1, 1), (0, 0)), ((2, 2), (1, 1))]
    # big dog / dog barks: barks links outside; dog barks / barks loudly: dog links outside.
    assert multi == [((1, 2), (0, 1))]
    pairs = BASIC.align_phrases(source, target, links)
    assert ((1, 2), (0, 1)) in pairs  # dog barks / dog barks
    assert ((0, 1), (0, 1)) not in pairs  # big dog / dog barks: barks links outside
    assert ((1, 1), (0, 0)) in pairs and ((2, 2), (1, 1)) in pairs
    # One-to-many links make no single-word pair; "dog" linked to "dog barks" now keeps "big
    # dog" / "dog barks" consistent.
    assert consistent_pairs(source, target, {(1, 0), (1, 1)}) == (
        [],
        [((0, 1), (0, 1)), ((1, 2), (0, 1))],
    )


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
    links = BASIC.link_words(source, target)
    assert links == {(0, 0), (2, 3)}
    pair = ((1, 2), (1, 3))
    assert SameContent().keep(source, target, links, [pair]) == []
    assert pair in BASIC.align_phrases(source, target, links)
    assert pair not in with_content_check(source, target, links)
    # Unlinked content on both sides ("fell sharply" / "dropped sharply") is a paraphrase.
    source = two_words("fell sharply", ["VERB", "ADV"])
    target = two_words("dropped sharply", ["VERB", "ADV"])
    assert ((0, 1), (0, 1)) in with_content_check(source, target, BASIC.link_words(source, target))


def test_unlinked_content_must_be_of_one_kind_on_both_sides():
    # "smiling bomber" / "Bali bomber": one unlinked word a side, an adjective and a name.
    source = two_words("smiling bomber", ["ADJ", "NOUN"])
    target = two_words("Bali bomber", ["PROPN", "NOUN"])
    links = BASIC.link_words(source, target)
    assert links == {(1, 1)}
    assert ((0, 1), (0, 1)) in BASIC.align_phrases(source, target, links)
    assert ((0, 1), (0, 1)) not in with_content_check(source, target, links)
    # Two adjectives are one kind, and so are a noun and a proper noun ("the firm" / "the
    # Acme", here joined by a link between the articles).
    target = two_words("angry bomber", ["ADJ", "NOUN"])
    assert ((0, 1), (0, 1)) in with_content_check(source, target, links)
    source = sentence("the firm", pos=["DET", "NOUN"], phrases=[(0, 1), (1, 1)])
    target = sentence("the Acme", pos=["DET", "PROPN"], phrases=[(0, 1), (1, 1)])
    assert ((0, 1), (0, 1)) in with_content_check(source, target, {(0, 0)})


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
    links = BASIC.link_words(source, target)
    pairs = with_content_check(source, target, links)
    assert ((1, 2), (0, 1)) in pairs and ((0, 2), (0, 1)) not in pairs
    # Without the check the negated phrase aligns when it is the only partner.
    source = source._replace(phrases=[(0, 2), (1, 1), (2, 2)])
    assert ((0, 2), (0, 1)) in BASIC.align_phrases(source, target, links)
    assert ((0, 2), (0, 1)) not in with_content_check(source, target, links)


def test_amounts_and_names_must_match():
    # "4,450 shares" / "4,500 shares": both sides hold an unlinked number.
    source = two_words("4,450 shares", ["NUM", "NOUN"])
    target = two_words("4,500 shares", ["NUM", "NOUN"])
    links = BASIC.link_words(source, target)
    assert links == {(1, 1)}
    assert ((0, 1), (0, 1)) in BASIC.align_phrases(source, target, links)
    assert ((0, 1), (0, 1)) not in with_content_check(source, target, links)


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
    links = CHECKED.link_words(source, target)
    assert links == {(0, 0), (2, 3)}
    pairs = with_content_check(source, target, links)
    assert ((0, 1), (0, 2)) in pairs and ((0, 2), (0, 3)) in pairs
    # Not when both sides hold unlinked words of the name ("John Delainey" / "Dave Delainey":
    # two first names), nor a proper noun apart from the linked name ("Bush 's report" /
    # "the report": an extra argument), nor next to a linked common noun ("Apple shares" /
    # "shares").
    source = two_words("John Delainey", ["PROPN", "PROPN"])
    target = two_words("Dave Delainey", ["PROPN", "PROPN"])
    links = CHECKED.link_words(source, target)
    assert links == {(1, 1)}
    assert ((0, 1), (0, 1)) not in with_content_check(source, target, links)
    source = sentence(
        "Bush 's report", pos=["PROPN", "PART", "NOUN"], phrases=[(0, 2), (0, 0), (2, 2)]
    )
    target = sentence("the report", pos=["DET", "NOUN"], phrases=[(0, 1), (1, 1)])
    links = CHECKED.link_words(source, target)
    assert ((0, 2), (0, 1)) not in with_content_check(source, target, links)
    source = two_words("Apple shares", ["PROPN", "NOUN"])
    target = sentence("the shares", pos=["DET", "NOUN"], phrases=[(0, 1), (1, 1)])
    links = CHECKED.link_words(source, target)
    assert links == {(1, 1)}
    assert ((0, 1), (0, 1)) not in with_content_check(source, target, links)


def test_a_title_stands_for_a_first_name_but_not_for_another_title():
    def name_pair(first, other):
        source, target = two_words(first, ["PROPN", "PROPN"]), two_words(other, ["PROPN", "PROPN"])
        links = CHECKED.link_words(source, target)
        assert links == {(1, 1)}
        return ((0, 1), (0, 1)) in with_content_check(source, target, links)

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
    links = CHECKED.link_words(source, target)
    assert ((0, 1), (0, 1)) in with_content_check(source, target, links)


def test_a_wider_pair_adds_the_same_words_or_a_preposition_each():
    source = sentence("in the park", pos=["ADP", "DET", "NOUN"], phrases=[(0, 2), (1, 2), (2, 2)])

    def multi_word_pairs(target_text, target_pos):
        target = sentence(target_text, pos=target_pos, phrases=[(0, 2), (1, 2), (2, 2)])
        pairs = CHECKED.align_phrases(source, target, {(2, 2)})
        return [pair for pair in pairs if pair[0][1] > pair[0][0]]

    tight, wide = ((1, 2), (1, 2)), ((0, 2), (0, 2))
    assert multi_word_pairs("in the park", ["ADP", "DET", "NOUN"]) == [wide, tight]
    assert multi_word_pairs("near the park", ["ADP", "DET", "NOUN"]) == [wide, tight]
    # "all the park" adds a determiner where the source adds a preposition.
    assert multi_word_pairs("all the park", ["DET", "DET", "NOUN"]) == [tight]
    # Pairs with other links inside are another region: each keeps its tightest.
    target = sentence("all the park", pos=["DET", "DET", "NOUN"])
    pairs = [((0, 2), (0, 2)), ((1, 2), (1, 2)), ((0, 2), (1, 2))]
    kept = TightestSpans().keep(source, target, {(2, 2), (0, 0)}, pairs)
    assert kept == [((0, 2), (0, 2)), ((1, 2), (1, 2))]


def test_a_phrase_keeps_its_partners_closest_in_length():
    source = sentence("a b c d")
    target = sentence("e f g")
    pairs = [((0, 1), (0, 1)), ((0, 1), (0, 2)), ((0, 3), (0, 2)), ((1, 3), (0, 2))]
    # "a b" has a partner of its length, "e f"; of the partners of "e f g", "b c d" has its
    # length ("a b" and "a b c d" are one word off).
    assert ClosestInLength().keep(source, target, set(), pairs) == [
        ((0, 1), (0, 1)),
        ((1, 3), (0, 2)),
    ]
