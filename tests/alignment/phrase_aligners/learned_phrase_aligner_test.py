import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError

from tests.alignment.learned_scorer_test import scorer_file
from tests.alignment.sentences import sentence
from tft_allennlp.alignment.phrase_aligners import LearnedPhraseAligner, PhraseAligner


def test_a_hand_made_scorer_links_identical_words_and_keeps_their_pairs(tmp_path):
    # First round sigmoid(10 * same_form - 5): 0.9933 for identical words, 0.0067 for others;
    # second sigmoid(10 * score - 5): 0.9929 and 0.0072. Every phrase pair scores 0.5.
    aligner = PhraseAligner.from_params(
        Params({"type": "tft_learned", "scorer": scorer_file(tmp_path / "scorer.json")})
    )
    source = sentence(
        "the dog barks", pos=["DET", "NOUN", "VERB"], phrases=[(1, 1), (2, 2), (0, 1)]
    )
    target = sentence(
        "the dog sleeps", pos=["DET", "NOUN", "VERB"], phrases=[(1, 1), (2, 2), (0, 1)]
    )
    scores = aligner.link_scores(source, target)
    assert scores[1, 1] == pytest.approx(0.9929, abs=1e-4)
    assert scores[2, 2] == pytest.approx(0.0072, abs=1e-4)
    record = aligner.align(source, target)
    # "the" links too (every word does), but only content words are single-word phrases.
    assert record["word_links"] == [[0, 0], [1, 1]]
    assert record["alignments"] == [[[0, 1], [0, 1]], [[1, 1], [1, 1]]]
    stricter = LearnedPhraseAligner(scorer_file(tmp_path / "scorer.json"), pair_threshold=0.6)
    assert stricter.align(source, target)["alignments"] == []
    with pytest.raises(ConfigurationError, match="scores in"):
        LearnedPhraseAligner(scorer_file(tmp_path / "scorer.json"), link_threshold=1.5)


def test_the_shipped_scorers_load():
    """The committed scorer files match the features this code computes."""
    lexical = LearnedPhraseAligner()
    assert lexical.scorer.groups == ["lexical", "wordnet", "static"]
    assert lexical.scorer.provenance["train"] == {
        "mtref": "mtref-train.tsv",
        "wiki": "wiki-train.tsv",
    }
    assert 0 < lexical.link_threshold < 1 and 0 < lexical.pair_threshold < 1
    contextual = LearnedPhraseAligner("contextual")
    assert contextual.scorer.groups[-1] == "contextual"
    assert contextual.scorer.encoder == {"embeddings": "installed", "layer": 3}
