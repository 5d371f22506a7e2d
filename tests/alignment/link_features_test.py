import numpy
import pytest

from tests.alignment.sentences import sentence
from tft_allennlp.alignment.link_features import (
    SECOND_ROUND_FEATURES,
    LinkFeatures,
    feature_names,
    similarity_features,
)
from tft_allennlp.alignment.word_embedder import StaticWordVectors


def column(features, matrix, name):
    return matrix[:, :, features.names.index(name)]


def test_lexical_features_by_hand():
    source = sentence(
        "The cats sat down",
        lemmas=["the", "cat", "sit", "down"],
        pos=["DET", "NOUN", "VERB", "ADP"],
    )
    target = sentence(
        "the cat was sitting",
        lemmas=["the", "cat", "be", "sit"],
        pos=["DET", "NOUN", "AUX", "VERB"],
    )
    features = LinkFeatures(["lexical"])
    matrix = features.first_round(source, target)
    assert matrix.shape == (4, 4, len(feature_names(["lexical"]))) and matrix.dtype == numpy.float32
    numpy.testing.assert_array_equal(
        column(features, matrix, "same_form"),
        [[1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
    )
    # cats ~ cat and sat ~ sitting share a lemma and not a form.
    assert (
        column(features, matrix, "same_lemma")[1, 1]
        == column(features, matrix, "same_lemma")[2, 3]
        == 1
    )
    assert column(features, matrix, "same_lemma").sum() == 2
    # "sitting" and "sat" share no prefix of four letters; "cats" and "cat" are too short.
    assert column(features, matrix, "same_prefix").sum() == 0
    # Content words: cats, sat; cat, sitting.
    assert column(features, matrix, "both_content")[1, 1] == 1
    assert column(features, matrix, "both_content").sum() == 4
    # Relative positions: word 1 of 4 (1/3) and word 3 of 4 (1).
    assert column(features, matrix, "position_distance")[1, 3] == pytest.approx(2 / 3)
    # The previous words of cats ~ cat are The ~ the.
    assert column(features, matrix, "previous_same_form")[1, 1] == 1
    assert column(features, matrix, "next_same_form")[0, 0] == 0  # cats is not cat
    assert (
        column(features, matrix, "source_NOUN")[1, 2]
        == column(features, matrix, "target_AUX")[3, 2]
        == 1
    )
    # "the" has its identical partner "the": for The ~ cat, the source word is the same form
    # as another target word.
    assert column(features, matrix, "source_form_elsewhere")[0, 1] == 1
    assert column(features, matrix, "source_form_elsewhere")[0, 0] == 0


def test_form_rules_and_prefixes_are_features():
    source = sentence("U.S. evidence", pos=["PROPN", "NOUN"])
    target = sentence("US evidences", pos=["PROPN", "NOUN"])
    features = LinkFeatures(["lexical"])
    matrix = features.first_round(source, target)
    assert column(features, matrix, "written_variant")[0, 0] == 1
    assert column(features, matrix, "same_prefix")[1, 1] == 1
    assert column(features, matrix, "written_variant").sum() == 1


def test_similarity_features_mark_the_mutual_best():
    similarity = numpy.array([[0.9, 0.2], [0.8, 0.1]])
    cosine, below_row, below_column, mutual = similarity_features(similarity)
    numpy.testing.assert_allclose(below_row, [[0.0, -0.7], [0.0, -0.7]])
    numpy.testing.assert_allclose(below_column, [[0.0, 0.0], [-0.1, -0.1]])
    numpy.testing.assert_array_equal(mutual, [[True, False], [False, False]])


def test_static_vectors_are_the_mean_of_the_wordpiece_embeddings(tiny_bert):
    import torch
    from transformers import AutoModel, AutoTokenizer

    vectors = StaticWordVectors(tiny_bert).vectors(["playing", "cat"])
    table = AutoModel.from_pretrained(tiny_bert).get_input_embeddings().weight.detach()
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    pieces = tokenizer.convert_tokens_to_ids(["play", "##ing"])
    expected = table[pieces].mean(0)
    expected = (expected / torch.linalg.norm(expected)).numpy()
    numpy.testing.assert_allclose(vectors[0], expected, atol=1e-6)
    batch = StaticWordVectors(tiny_bert).vectors_batch([["playing", "cat"], ["cat"]])
    numpy.testing.assert_allclose(batch[0], vectors, atol=1e-6)
    features = LinkFeatures(["static"])
    matrix = features.first_round(
        sentence("playing cat"), sentence("cat"), {"static": batch[0] @ batch[1].T}
    )
    assert matrix[1, 0, features.names.index("static_cosine")] == pytest.approx(1.0, abs=1e-6)


def test_the_second_round_reads_neighbours_heads_and_rivals():
    scores = numpy.array([[0.9, 0.1, 0.0], [0.2, 0.8, 0.3]])
    source = sentence("a b")._replace(heads=[1, 1])
    target = sentence("c d e")._replace(heads=[1, 1, 1])
    second = LinkFeatures.second_round(scores, source, target)
    assert second.shape == (2, 3, len(SECOND_ROUND_FEATURES))
    score, previous, following, heads, row_other, column_other = numpy.moveaxis(second, -1, 0)
    numpy.testing.assert_allclose(previous[1, 1], 0.9)  # (0, 0) before (1, 1)
    numpy.testing.assert_allclose(following[0, 0], 0.8)
    numpy.testing.assert_allclose(heads, numpy.full((2, 3), 0.8))  # every head pair is (1, 1)
    # The best other score of row 0 for (0, 0) is 0.1; for (0, 1) it is 0.9.
    numpy.testing.assert_allclose(row_other[0], [0.1, 0.9, 0.9])
    numpy.testing.assert_allclose(column_other[:, 0], [0.2, 0.9])


def test_groups_are_checked():
    with pytest.raises(ValueError, match="unknown feature groups"):
        LinkFeatures(["lexical", "magic"])
    with pytest.raises(ValueError, match="needs a WordNet database"):
        LinkFeatures(["wordnet"])
    with pytest.raises(ValueError, match="needs contextual similarities"):
        LinkFeatures(["contextual"]).first_round(sentence("a"), sentence("b"))
