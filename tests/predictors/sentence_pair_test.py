import json
import os
import subprocess
import sys

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch, DatasetReader
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from tests import CONFIGS_ROOT, PROJECT_ROOT
from tests.predictors import unread
from tft_allennlp.common.glue_tasks import resolve_task
from tft_allennlp.common.input_problems import MalformedInputError
from tft_allennlp.models.smart import SmartRegularizedModel
from tft_allennlp.predictors import SentencePairPredictor
from tft_allennlp.predictors.sentence_pair import expected_keys, sentence_keys


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


def test_bfloat16_predictions_are_float32_ones_to_its_rounding(archives):
    lines = [
        {"sentence1": "A man is playing a flute.", "sentence2": "A man plays the flute."},
        {"sentence1": "The cat sat.", "sentence2": "The bank closed early today."},
    ]
    exact = Predictor.from_path(archives["mrpc"]).predict_batch_json(lines)
    predictor = Predictor.from_path(archives["mrpc"], precision="bfloat16")
    # The matrix products see bfloat16 inputs.
    seen = []
    layer = predictor._model._task_output._output_layer
    layer.register_forward_hook(lambda module, inputs, output: seen.append(output.dtype))
    rounded = predictor.predict_batch_json(lines)
    assert seen == [torch.bfloat16]
    # One line at a time (`allennlp predict --batch-size 1`) goes the same way.
    assert predictor.predict_json(lines[0])["probs"] == pytest.approx(rounded[0]["probs"], abs=1e-2)
    assert seen == [torch.bfloat16] * 2
    for one, other in zip(exact, rounded):
        # bfloat16 keeps 8 bits of each product's operands: probabilities within 2e-2 here.
        assert other["probs"] == pytest.approx(one["probs"], abs=2e-2)
        assert one["probs"] != other["probs"]
    with pytest.raises(ConfigurationError, match="precision 'float64': not one of float32, "):
        Predictor.from_path(archives["mrpc"], precision="float64")
    with pytest.raises(ConfigurationError, match="precision 'float16' needs a GPU"):
        Predictor.from_path(archives["mrpc"], precision="float16")


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
        (
            {"text": "no sentence here"},
            "expected '#1 String' and '#2 String' (task mrpc's columns), "
            "or 'sentence1' and 'sentence2'",
        ),
        (
            {"#1 String": "A man.", "sentence2": "A man plays."},
            "task mrpc takes two sentences: '#2 String' is missing",
        ),
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


@pytest.mark.parametrize(
    "task, keys, expected",
    [
        ("sst2", [], "'sentence'"),
        ("mnli", [], "'sentence1' and 'sentence2'"),
        (
            "qnli",
            [("question", "sentence")],
            "'question' and 'sentence' (task qnli's columns), or 'sentence1' and 'sentence2'",
        ),
        (
            {"name": "review", "sentence1": "text", "labels": ["good", "bad"]},
            [("text", None)],
            "'text' (task review's column), or 'sentence'",
        ),
        (
            {"sentence1": 3, "sentence2": 4, "label": 0, "header": False, "labels": ["a", "b"]},
            [],
            "'sentence1' and 'sentence2'",
        ),
    ],
)
def test_a_line_may_use_the_tasks_own_keys(task, keys, expected):
    task = resolve_task(task)
    assert sentence_keys(task) == keys + [("sentence1", "sentence2"), ("sentence", "sentence2")]
    assert expected_keys(task) == expected


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


@pytest.fixture(scope="module")
def siamese(tmp_path_factory, tiny_bert):
    """A Siamese MRPC archive trained for one epoch from its config on the fixtures."""
    directory = tmp_path_factory.mktemp("siamese")
    train_model_from_file(
        CONFIGS_ROOT / "siamese/mrpc_softmax.jsonnet",
        directory,
        overrides=json.dumps({"trainer.num_epochs": 1, "data_loader.batch_size": 4}),
        force=True,
    )
    return str(directory / "model.tar.gz")


def pooled(predictor, pair):
    """The model's own pooled vectors of the pair's two sentences."""
    instance = predictor._dataset_reader.text_to_instance(pair["sentence1"], pair["sentence2"])
    predictor._dataset_reader.apply_token_indexers(instance)
    batch = Batch([instance])
    batch.index_instances(predictor._model.vocab)
    tensors = batch.as_tensor_dict()
    with torch.no_grad():
        return [
            predictor._model.embed(tensors[field])[0].tolist() for field in ("tokens1", "tokens2")
        ]


def test_siamese_embeddings_on_request(siamese):
    predictor = Predictor.from_path(siamese)
    assert type(predictor).__name__ == "SentencePairPredictor"
    plain = predictor.predict_json(PAIR)
    assert plain["label"] in {"0", "1"} and len(plain["probs"]) == 2
    assert "embedding1" not in plain and "embedding2" not in plain
    asked = predictor.predict_json({**PAIR, "return_embeddings": True})
    assert asked["probs"] == pytest.approx(plain["probs"], abs=1e-6)
    expected = pooled(predictor, PAIR)
    assert asked["embedding1"] == pytest.approx(expected[0], abs=1e-5)
    assert asked["embedding2"] == pytest.approx(expected[1], abs=1e-5)
    batch = predictor.predict_batch_json([PAIR, {**PAIR, "return_embeddings": True}])
    assert "embedding1" not in batch[0]
    assert batch[1]["embedding2"] == pytest.approx(expected[1], abs=1e-5)


def test_siamese_embeddings_by_predictor_option(siamese):
    predictor = Predictor.from_path(siamese, return_embeddings=True)
    output = predictor.predict_json(PAIR)
    assert len(output["embedding1"]) == len(output["embedding2"]) == 32
    # A line's own choice wins over the option.
    assert "embedding1" not in predictor.predict_json({**PAIR, "return_embeddings": False})


def test_a_smart_wrapped_siamese_model_returns_its_embeddings(siamese):
    archive = load_archive(siamese)
    wrapped = SmartRegularizedModel(archive.model.vocab, archive.model).eval()
    predictor = SentencePairPredictor(wrapped, archive.dataset_reader, return_embeddings=True)
    output = predictor.predict_json(PAIR)
    expected = Predictor.from_path(siamese, return_embeddings=True).predict_json(PAIR)
    assert output["embedding1"] == pytest.approx(expected["embedding1"], abs=1e-6)


def test_return_embeddings_problems(siamese, predictor, archives):
    siamese_predictor = Predictor.from_path(siamese)
    with pytest.raises(MalformedInputError, match="input line 1: 'return_embeddings' must be"):
        unread(siamese_predictor).load_line(json.dumps({**PAIR, "return_embeddings": "yes"}))
    # A cross-encoder has no sentence embeddings to return.
    with pytest.raises(MalformedInputError, match="only a Siamese model"):
        predictor.predict_json({**PAIR, "return_embeddings": True})
    with pytest.raises(ConfigurationError, match="only a Siamese model"):
        Predictor.from_path(archives["mrpc"], return_embeddings=True)
