import json
import math

import numpy
import pytest
from allennlp.common.checks import ConfigurationError

from tests.alignment.sentences import sentence
from tft_allennlp.alignment.learned_scorer import (
    PAIR_FEATURES,
    LearnedScorer,
    LogisticModel,
    pair_features,
)
from tft_allennlp.alignment.link_features import SECOND_ROUND_FEATURES, feature_names


def test_a_logistic_model_is_a_sigmoid_of_a_weighted_sum():
    model = LogisticModel(["a", "b"], [2.0, -1.0], 0.5)
    features = numpy.array([[[1.0, 1.0], [0.0, 0.0]]])
    expected = [[1 / (1 + math.exp(-1.5)), 1 / (1 + math.exp(-0.5))]]
    numpy.testing.assert_allclose(model.probabilities(features), expected)
    assert LogisticModel.from_json(model.as_json()) == model
    with pytest.raises(ValueError, match="2 feature names but 1 weights"):
        LogisticModel.from_json({"names": ["a", "b"], "weights": [1.0], "bias": 0.0})


def scorer_file(path, groups=("lexical",), first_names=None):
    """A scorer that links identical words only and keeps every pair at 0.5."""
    names = first_names or feature_names(groups)
    first = LogisticModel(names, [10.0 if n == "same_form" else 0.0 for n in names], -5.0)
    second_names = names + list(SECOND_ROUND_FEATURES)
    second = LogisticModel(
        second_names, [10.0 if n == "score" else 0.0 for n in second_names], -5.0
    )
    pairs = LogisticModel(list(PAIR_FEATURES), [0.0] * len(PAIR_FEATURES), 0.0)
    scorer = LearnedScorer(list(groups), {}, first, second, 0.5, pairs, 0.5, {"by": "hand"})
    path.write_text(json.dumps(scorer.as_json()))
    return str(path)


def test_a_scorer_file_is_read_and_checked_against_the_code(tmp_path):
    scorer = LearnedScorer.from_file(scorer_file(tmp_path / "scorer.json"))
    assert scorer.link_threshold == 0.5 and scorer.provenance == {"by": "hand"}
    stale = scorer_file(tmp_path / "stale.json", first_names=["same_form", "old_feature"])
    with pytest.raises(ConfigurationError, match="stale.json: made for other features"):
        LearnedScorer.from_file(stale)
    (tmp_path / "broken.json").write_text('{"groups": ["lexical"]}')
    with pytest.raises(ConfigurationError, match="broken.json: not a learned aligner's scorer"):
        LearnedScorer.from_file(str(tmp_path / "broken.json"))


def test_pair_features_by_hand():
    source = sentence("big dog barks", pos=["ADJ", "NOUN", "VERB"])
    target = sentence("dog barks loudly", pos=["NOUN", "VERB", "ADV"])
    scores = numpy.array([[0.1, 0.0, 0.0], [0.9, 0.0, 0.2], [0.0, 0.7, 0.0]])
    links = {(1, 0), (2, 1)}
    pairs = [((1, 2), (0, 1)), ((0, 1), (0, 0))]
    table = dict(zip(PAIR_FEATURES, pair_features(source, target, scores, links, pairs).T))
    # "dog barks" / "dog barks": links 0.9 and 0.7 inside; dog ~ loudly (0.2) leaves it from
    # the source side, big ~ dog (0.1) from the target side.
    assert table["least_link_score"][0] == pytest.approx(0.7)
    assert table["mean_link_score"][0] == pytest.approx(0.8)
    assert table["source_leak"][0] == pytest.approx(0.2)
    assert table["target_leak"][0] == pytest.approx(0.1)
    assert table["identical"][0] == 1.0 and table["single_words"][0] == 0.0
    assert table["linked_share"][0] == 1.0
    # "big dog" / "dog": "big" is unlinked content; big's best inside is 0.1.
    assert table["source_unlinked_content"][1] == 1 and table["target_unlinked_content"][1] == 0
    assert table["unlinked_content_difference"][1] == 1
    assert table["log_length_ratio"][1] == pytest.approx(math.log(2))
    assert table["least_source_word_best"][1] == pytest.approx(0.1)
    # dog ~ loudly (0.2) leaves this pair too; no word outside "big dog" scores with "dog".
    assert table["source_leak"][1] == pytest.approx(0.2) and table["target_leak"][1] == 0.0
