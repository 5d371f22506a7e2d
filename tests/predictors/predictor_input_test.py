"""
The plugin's predictors sort a batch of lines by length, cut it into sub-batches where padding
them together costs more than another forward pass, and give the outputs back in input order.
"""

import json

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.predictors import Predictor

from tests import CONFIGS_ROOT
from tft_allennlp.predictors.predictor_input import length_sorted_batches


@pytest.mark.parametrize(
    "overhead, max_batch_size, expected",
    [
        # Sorted: positions 1 and 3 (3 tokens), 0 (5), 2 (20), 4 (21).
        (0, 128, [[1, 3], [0], [2], [4]]),
        # 6 per pass: [1, 3, 0] costs 6 + 3 * 5 = 21 against 6 + 6 + 6 + 5 = 23 apart, and
        # [2, 4] 6 + 42 = 48 against 6 + 20 + 6 + 21 = 53.
        (6, 128, [[1, 3, 0], [2, 4]]),
        (1000, 128, [[1, 3, 0, 2, 4]]),
        (1000, 2, [[1, 3], [0], [2, 4]]),
    ],
)
def test_length_sorted_batches(overhead, max_batch_size, expected):
    assert length_sorted_batches([5, 3, 20, 3, 21], overhead, max_batch_size) == expected


@pytest.fixture(scope="module")
def predictor(tmp_path_factory, tiny_bert):
    directory = tmp_path_factory.mktemp("mrpc")
    train_model_from_file(
        CONFIGS_ROOT / "glue/mrpc.jsonnet",
        directory,
        overrides=json.dumps({"trainer.num_epochs": 1}),
        force=True,
    )
    return Predictor.from_path(str(directory / "model.tar.gz"))


def test_a_batch_is_predicted_in_length_order_and_returned_in_input_order(predictor, monkeypatch):
    words = "the cat sat on a mat and then it ran off to the bank".split()
    lines = [
        {"sentence1": " ".join(words[: 2 + (7 * i) % 12]), "sentence2": " ".join(words[: 3 + i])}
        for i in range(10)
    ]
    alone = [predictor.predict_json(line) for line in lines]
    calls = []
    forward = predictor._model.forward_on_instances

    def spy(instances):
        calls.append([len(instance["tokens"]) for instance in instances])
        return forward(instances)

    monkeypatch.setattr(predictor._model, "forward_on_instances", spy)
    batch = predictor.predict_batch_json(lines)

    # Each pass takes instances in length order, and the passes follow one another in it.
    flat = [length for call in calls for length in call]
    assert len(calls) > 1 and flat == sorted(flat) and len(flat) == len(lines)
    for one, many in zip(alone, batch):
        assert many["sentence1"] == one["sentence1"] and many["sentence2"] == one["sentence2"]
        assert many["label"] == one["label"]
        assert many["probs"] == pytest.approx(one["probs"], abs=1e-5)
