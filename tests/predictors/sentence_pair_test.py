import json
import os
import subprocess
import sys

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params
from allennlp.data import DatasetReader
from allennlp.predictors import Predictor

from tests import CONFIGS_ROOT, PROJECT_ROOT
from tests.predictors import unread
from tft_allennlp.common.input_problems import MalformedInputError
from tft_allennlp.predictors import SentencePairPredictor


@pytest.fixture(scope="module")
def archives(tmp_path_factory, tiny_bert):
    """Archives trained for one epoch from the real MRPC and STS-B configs on the fixtures."""
    paths = {}
    for task in ("mrpc", "stsb"):
        directory = tmp_path_factory.mktemp(task)
        train_model_from_file(
            CONFIGS_ROOT / f"glue/{task}.jsonnet",
            directory,
            overrides=json.dumps({"trainer.num_epochs": 1}),
            force=True,
        )
        paths[task] = str(directory / "model.tar.gz")
    return paths


def test_pair_classification(archives):
    predictor = Predictor.from_path(archives["mrpc"])
    assert type(predictor).__name__ == "SentencePairPredictor"
    pair = {
        "sentence1": "A man is playing a flute.",
        "sentence2": "A man plays the flute.",
        "id": 7,
    }
    output = predictor.predict_json(pair)
    # The input's fields come back with the model's own outputs for the same pair.
    assert {key: output[key] for key in pair} == pair
    instance = predictor._dataset_reader.text_to_instance(pair["sentence1"], pair["sentence2"])
    predictor._dataset_reader.apply_token_indexers(instance)
    expected = predictor._model.forward_on_instance(instance)
    assert output["probs"] == pytest.approx(expected["probs"].tolist(), abs=1e-6)
    assert output["label"] == expected["label"]
    batch = predictor.predict_batch_json(
        [
            {"sentence1": "A man is playing a flute.", "sentence2": "A man plays the flute."},
            {"sentence1": "The cat sat.", "sentence2": "The bank closed early today."},
        ]
    )
    assert len(batch) == 2 and batch[1]["sentence2"] == "The bank closed early today."
    assert batch[0]["probs"] == pytest.approx(output["probs"], abs=1e-5)


def test_regression_returns_a_score(archives):
    predictor = Predictor.from_path(archives["stsb"], "tft_sentence_pair")
    output = predictor.predict_json({"sentence1": "A cat sat.", "sentence2": "A cat was sitting."})
    assert isinstance(output["score"], float)
    assert "label" not in output


@pytest.fixture(scope="module")
def predictor(archives):
    return Predictor.from_path(archives["mrpc"])


PAIR = {"sentence1": "A man is playing a flute.", "sentence2": "A man plays the flute."}


@pytest.mark.parametrize(
    "line, reason",
    [
        (
            '{"sentence1": "A man",}',
            "invalid JSON: Expecting property name enclosed in double quotes at column 23",
        ),
        ('["A man.", "A man plays."]', 'expected a JSON object, not ["A man.", "A man plays."]'),
        ({**PAIR, "sentence1": ""}, "'sentence1' must be non-empty text, not \"\""),
        ({**PAIR, "sentence2": "  \n"}, "'sentence2' must be non-empty text, not \"  \\n\""),
        ({**PAIR, "sentence2": None}, "'sentence2' must be non-empty text, not null"),
        ({**PAIR, "sentence1": 1.5}, "'sentence1' must be non-empty text, not 1.5"),
        (
            {**PAIR, "sentence1": ["A", "man"]},
            '\'sentence1\' must be non-empty text, not ["A", "man"]',
        ),
        ({"text": "no sentence here"}, "expected 'sentence1' and 'sentence2', or 'sentence'"),
        (
            {"sentence": "Only one sentence."},
            "task mrpc takes two sentences: 'sentence2' is missing",
        ),
    ],
)
def test_each_problem_is_named_with_its_line(predictor, line, reason):
    text = line if isinstance(line, str) else json.dumps(line)
    with pytest.raises(MalformedInputError) as error:
        unread(predictor).load_line(text)
    assert str(error.value) == f"input line 1: {reason}"
    if not isinstance(line, str):  # the same check for a request from Python
        with pytest.raises(MalformedInputError) as error:
            predictor.predict_json(line)
        assert str(error.value) == f"input: {reason}"
        with pytest.raises(MalformedInputError) as error:
            predictor.predict_batch_json([PAIR, line])
        assert str(error.value) == f"input: {reason}"


def test_a_single_sentence_task_takes_one_sentence(predictor):
    """The predictor checks the sentences against its reader's task."""
    model = predictor._model
    tokenizer = {
        "type": "pretrained_transformer",
        "model_name": os.environ["TFT_MODEL"],
        "add_special_tokens": False,
    }
    reader = DatasetReader.from_params(
        Params({"type": "tft_glue", "task": "sst2", "tokenizer": tokenizer})
    )
    single = SentencePairPredictor(model, reader)
    assert single.load_line('{"sentence": "Fine."}') == {"sentence": "Fine."}
    with pytest.raises(MalformedInputError) as error:
        single.load_line(json.dumps(PAIR))
    assert (
        str(error.value)
        == "input line 2: task sst2 takes one sentence: 'sentence2' is not expected"
    )


@pytest.mark.parametrize("include_package", [False, True])
def test_allennlp_predict_finds_the_plugin(archives, tmp_path, include_package):
    """`allennlp predict` works with the `.allennlp_plugins` file alone, and with the flag."""
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        json.dumps({"sentence1": "A man is playing a flute.", "sentence2": "A man plays."})
        + "\n"
        + json.dumps({"sentence1": "Two dogs run.", "sentence2": "The town held an election."})
        + "\n"
    )
    output = tmp_path / "predictions.jsonl"
    command = [sys.executable, "-m", "allennlp", "predict", archives["mrpc"], str(pairs)]
    command += ["--output-file", str(output), "--silent"]
    if include_package:
        command += ["--include-package", "tft_allennlp"]
    # From the project root the `.allennlp_plugins` file is found; elsewhere only the flag works.
    cwd = PROJECT_ROOT if not include_package else tmp_path
    subprocess.run(command, cwd=cwd, check=True, env=dict(os.environ), capture_output=True)
    predictions = [json.loads(line) for line in output.read_text().splitlines()]
    assert len(predictions) == 2
    assert all(p["label"] in {"0", "1"} and len(p["probs"]) == 2 for p in predictions)
