"""
The README's "Your own task" config, as a user would run it: copied from the README into a folder
of its own beside its data, trained for one epoch on the tiny model, predicted.
"""

import json
import re

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.predictors import Predictor

from tests import PROJECT_ROOT
from tft_allennlp.common.input_problems import MalformedInputError
from tft_allennlp.predictors.allennlp_commands import CheckedPredictManager

PAIRS = [
    ("the cat sat .", "a cat sat .", "same"),
    ("the dog ran .", "it rained .", "different"),
]


@pytest.fixture(scope="module")
def trained(tmp_path_factory, tiny_bert):
    """The folder of the README's config and data, with the run `runs/paraphrase` trained in it."""
    folder = tmp_path_factory.mktemp("readme_task")
    readme = (PROJECT_ROOT / "README.md").read_text()
    section = readme.split("## Your own task", 1)[1].split("\n## ", 1)[0]
    (config,) = re.findall(r"```jsonnet\n(.*?)```", section, re.DOTALL)
    rows = ["id\tfirst\tsecond\tverdict"] + [
        f"{i}\t{a}\t{b}\t{label}" for i, (a, b, label) in enumerate(PAIRS * 2)
    ]
    for name in ("train.tsv", "dev.tsv"):
        (folder / name).write_text("\n".join(rows) + "\n")
    (folder / "paraphrase.jsonnet").write_text(config)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        train_model_from_file(
            "paraphrase.jsonnet", "runs/paraphrase", overrides=json.dumps({"trainer.num_epochs": 1})
        )
    return folder


def test_the_readme_config_for_your_own_task_trains_and_predicts_its_labels(trained):
    predictor = Predictor.from_path(str(trained / "runs/paraphrase/model.tar.gz"))
    output = predictor.predict_json({"sentence1": "the cat sat .", "sentence2": "a cat sat ."})
    assert output["label"] in ("same", "different")
    metrics = json.loads((trained / "runs/paraphrase/metrics.json").read_text())
    assert {"validation_accuracy", "validation_f1", "validation_combined_score"} <= metrics.keys()


def _predicted(predictor, input_file, output_file, use_dataset_reader=False):
    """The labels `allennlp predict` writes for `input_file`, in its order."""
    CheckedPredictManager(
        predictor, str(input_file), str(output_file), 1, False, use_dataset_reader
    ).run()
    return [json.loads(line)["label"] for line in output_file.read_text().splitlines()]


def test_predict_takes_lines_keyed_by_the_tasks_own_columns(trained, tmp_path):
    predictor = Predictor.from_path(str(trained / "runs/paraphrase/model.tar.gz"))
    own, generic = tmp_path / "own.jsonl", tmp_path / "generic.jsonl"
    own.write_text("".join(json.dumps({"first": a, "second": b}) + "\n" for a, b, _ in PAIRS))
    generic.write_text(
        "".join(json.dumps({"sentence1": a, "sentence2": b}) + "\n" for a, b, _ in PAIRS)
    )
    labels = _predicted(predictor, generic, tmp_path / "generic.out")
    assert _predicted(predictor, own, tmp_path / "own.out") == labels
    assert set(labels) <= {"same", "different"}
    # The task's own data file, read by its reader (`--use-dataset-reader`), predicts the same.
    read = _predicted(predictor, trained / "dev.tsv", tmp_path / "dev.out", True)
    assert read == labels * 2
    # A line with neither naming is refused, naming both.
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"first": "the cat sat ."}) + "\n" + json.dumps({"a": "b"}) + "\n")
    with pytest.raises(MalformedInputError) as error:
        _predicted(predictor, bad, tmp_path / "bad.out")
    assert str(error.value) == f"{bad}:1: task paraphrase takes two sentences: 'second' is missing"
    bad.write_text(json.dumps({"a": "b"}) + "\n")
    with pytest.raises(MalformedInputError) as error:
        _predicted(predictor, bad, tmp_path / "bad.out")
    assert str(error.value) == (
        f"{bad}:1: expected 'first' and 'second' (task paraphrase's columns), "
        "or 'sentence1' and 'sentence2'"
    )
