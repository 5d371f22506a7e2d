"""
Tasks of the user's own, described in the config: string labels in a TSV file, a regression in
a header-less CSV file, and a single-sentence task in JSON lines; then trained and predicted
end to end from a config that builds on the shipped recipe.
"""

import json

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.common.checks import ConfigurationError
from allennlp.data.fields import LabelField, TensorField
from allennlp.predictors import Predictor

from tests.readers import glue_reader
from tft_allennlp.common.glue_tasks import GLUE_TASKS, resolve_task
from tft_allennlp.common.input_problems import MalformedInputError
from tft_allennlp.common.sentence_tasks import SentenceTask

PARAPHRASE = {
    "name": "paraphrase",
    "sentence1": "first",
    "sentence2": "second",
    "label": "verdict",
    "labels": ["same", "different"],
    "metrics": ["accuracy", "f1", "mcc"],
    "positive_label": "same",
}
PAIRS = [
    ("the cat sat on the mat .", "a cat sat on a mat .", "same"),
    ("the dog ran in the park .", "it rained all day .", "different"),
    ("a man is playing a flute .", "a man plays the flute .", "same"),
    ("the bank closed early .", "the cat sat .", "different"),
]


def _write_tsv(path, rows, header="id\tfirst\tsecond\tverdict"):
    lines = [header] + [f"{i}\t{a}\t{b}\t{label}" for i, (a, b, label) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_string_labels_from_a_tsv_file(tmp_path):
    path = _write_tsv(tmp_path / "train.tsv", PAIRS)
    instances = list(glue_reader(PARAPHRASE).read(path))
    assert [i["label"].label for i in instances] == ["same", "different", "same", "different"]
    assert all(isinstance(i["label"], LabelField) for i in instances)
    assert instances[1]["metadata"]["sentence2"] == "it rained all day ."
    # No index column in the description: the id is the line number.
    assert [i["metadata"]["index"] for i in instances] == ["2", "3", "4", "5"]
    bad = _write_tsv(tmp_path / "bad.tsv", PAIRS[:1] + [("a b .", "c d .", "maybe")])
    with pytest.raises(MalformedInputError, match=r"bad.tsv:3: unknown label: 'maybe'"):
        list(glue_reader(PARAPHRASE).read(bad))


def test_files_with_and_without_header_of_one_task(tmp_path):
    """With `columns`, a first line of as many fields is a header only if it names them."""
    task = {**PARAPHRASE, "columns": ["id", "first", "second", "verdict"]}
    headed = _write_tsv(tmp_path / "headed.tsv", PAIRS)
    bare = tmp_path / "bare.tsv"
    bare.write_text("".join(open(headed).readlines()[1:]))
    for path, first_line in ((headed, 2), (str(bare), 1)):
        instances = list(glue_reader(task).read(path))
        assert [i["label"].label for i in instances] == ["same", "different", "same", "different"]
        assert instances[0]["metadata"]["line_number"] == first_line


def test_a_regression_from_a_csv_file_without_header(tmp_path):
    task = {
        "name": "similarity",
        "format": "csv",
        "header": False,
        "sentence1": 1,
        "sentence2": 2,
        "label": 0,
        "regression": True,
        "score_range": [0, 1],
    }
    # Standard CSV quoting: a comma and a line break inside quoted text.
    path = tmp_path / "train.csv"
    path.write_text('0.25,"the cat, sat .",a cat sat .\n1,"it rained\nall day .",it rained .\n')
    instances = list(glue_reader(task).read(str(path)))
    assert [i["label"].tensor.item() for i in instances] == [0.25, 1.0]
    assert all(isinstance(i["label"], TensorField) for i in instances)
    assert instances[0]["metadata"]["sentence1"] == "the cat, sat ."
    assert instances[1]["metadata"]["sentence1"] == "it rained\nall day ."
    # A record is numbered by its first line.
    assert [i["metadata"]["line_number"] for i in instances] == [1, 2]
    path.write_text('0.5,a b .,c d .\n2,"e\nf .",g .\n')
    with pytest.raises(MalformedInputError, match=r"train.csv:2: unknown label: score '2'"):
        list(glue_reader(task).read(str(path)))
    assert resolve_task(task).metrics == ("pearson", "spearman")


def test_a_single_sentence_task_from_json_lines(tmp_path):
    task = {
        "name": "sentiment",
        "format": "jsonl",
        "sentence1": "text",
        "index": "id",
        "labels": ["1", "0", "true"],
    }
    path = tmp_path / "dev.jsonl"
    rows = [
        {"id": "a", "text": "a fine film .", "label": 1},
        {"id": "b", "text": "a dull film .", "label": "0"},
        {"id": 7, "text": "it was fine .", "label": True},
        {"text": "no label : a test row ."},
    ]
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n\n")
    instances = list(glue_reader(task).read(str(path)))
    # JSON numbers and booleans are labels as the JSON text writes them.
    assert [i["label"].label for i in instances[:3]] == ["1", "0", "true"]
    assert "label" not in instances[3].fields
    assert [i["metadata"]["index"] for i in instances] == ["a", "b", "7", "4"]
    assert {token.type_id for token in instances[0]["tokens"].tokens} == {0}
    path.write_text(json.dumps(rows[0]) + "\n" + json.dumps({"label": 1}) + "\n{oops\n")
    with pytest.raises(MalformedInputError, match=r"dev.jsonl:2: missing key: 'text'"):
        list(glue_reader(task).read(str(path)))
    lenient = list(glue_reader(task, lenient=True).read(str(path)))
    assert len(lenient) == 1


@pytest.mark.parametrize(
    "description, message",
    [
        ({"labels": ["a"], "regression": True}, "give `labels`"),
        ({}, "give `labels`"),
        ({"labels": ["a", "b"], "metrics": ["f1"]}, "f1 needs `positive_label`"),
        ({"labels": ["a", "b"], "metrics": ["pearson"]}, "classification task takes"),
        ({"regression": True, "metrics": ["accuracy"]}, "regression task takes"),
        ({"labels": ["a", "b"], "positive_label": "c"}, "positive_label 'c' is not one of"),
        ({"labels": ["a", "b"], "format": "xlsx"}, "format must be one of"),
        ({"labels": ["a", "b"], "header": False}, "needs column positions"),
        ({"labels": ["a", "b"], "format": "jsonl", "sentence1": 0}, "by their JSON keys"),
        ({"labels": ["a", "b"], "label_column": "x"}, r"unknown keys \['label_column'\]"),
    ],
)
def test_descriptions_that_cannot_work_are_refused(description, message):
    with pytest.raises(ConfigurationError, match=message):
        resolve_task(description)


def test_glue_tasks_are_descriptions_of_the_same_kind():
    assert all(isinstance(task, SentenceTask) for task in GLUE_TASKS.values())
    assert resolve_task("mrpc") is GLUE_TASKS["mrpc"]
    assert GLUE_TASKS["stsb"].is_regression and GLUE_TASKS["stsb"].score_range == (0.0, 5.0)
    assert GLUE_TASKS["cola"].validation_metric == "mcc"
    assert GLUE_TASKS["qqp"].validation_metric == "combined_score"
    with pytest.raises(ConfigurationError, match="Unknown GLUE task 'sts'.*your own"):
        resolve_task("sts")


def test_a_task_of_your_own_trains_and_predicts_its_labels(tmp_path):
    train = _write_tsv(tmp_path / "train.tsv", PAIRS * 2)
    dev = _write_tsv(tmp_path / "dev.tsv", PAIRS)
    config = tmp_path / "paraphrase.jsonnet"
    # A config anywhere builds on the shipped recipe through jsonnet's library path.
    config.write_text(
        "local sentence_task = import 'training_configs/common/task.libsonnet';\n"
        f"sentence_task(task={json.dumps(PARAPHRASE)}, train_data_path='{train}',\n"
        f"              validation_data_path='{dev}') + {{ trainer+: {{ num_epochs: 1 }} }}\n"
    )
    model = train_model_from_file(str(config), str(tmp_path / "run"))
    assert model.vocab.get_index_to_token_vocabulary("labels") == {0: "same", 1: "different"}
    metrics = json.loads((tmp_path / "run/metrics.json").read_text())
    assert {"validation_accuracy", "validation_f1", "validation_mcc"} <= metrics.keys()
    mean = (
        metrics["validation_accuracy"] + metrics["validation_f1"] + metrics["validation_mcc"]
    ) / 3
    assert metrics["validation_combined_score"] == pytest.approx(mean)
    predictor = Predictor.from_path(str(tmp_path / "run/model.tar.gz"))
    output = predictor.predict_json({"sentence1": PAIRS[0][0], "sentence2": PAIRS[0][1]})
    assert output["label"] in ("same", "different")
    assert len(output["probs"]) == 2
