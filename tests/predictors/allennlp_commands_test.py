"""
AllenNLP's `predict` and `evaluate` with the plugin: no output file is a file they read (the
input, the archive, the weights), and predict names a bad input line by file and line number,
blank lines counted, also for a line that is not UTF-8.
"""

import argparse
import gzip
import io
import json
import os
import subprocess
import sys

import pytest
from allennlp.commands import evaluate as evaluate_command
from allennlp.commands import predict as predict_command
from allennlp.commands.train import train_model_from_file
from allennlp.common.checks import ConfigurationError
from allennlp.predictors import Predictor

from tests import CONFIGS_ROOT, PROJECT_ROOT
from tests.allennlp_cli import forked_allennlp
from tests.predictors import unread
from tft_allennlp.common.input_problems import MalformedInputError
from tft_allennlp.predictors.allennlp_commands import (
    CheckedPredictManager,
    check_not_an_input,
    evaluation_files,
)
from tft_allennlp.predictors.predictor_input import input_lines

PAIR = {"sentence1": "A man plays.", "sentence2": "A man is playing."}
LINE = json.dumps(PAIR)


@pytest.fixture
def pairs(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(LINE + "\n" + LINE + "\n")
    return path


def _refusal(output, source):
    return f"{output}: is the input file {source}; writing it would destroy the input"


def test_an_output_that_is_the_input_is_refused_in_any_spelling(pairs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "link.jsonl").symlink_to("in.jsonl")
    os.link(pairs, tmp_path / "hard.jsonl")
    for output in ("in.jsonl", "./sub/../in.jsonl", str(pairs), "link.jsonl", "hard.jsonl"):
        with pytest.raises(ConfigurationError) as error:
            check_not_an_input(output, [None, "-", {"a": 1}, str(pairs)])
        assert str(error.value) == _refusal(output, pairs)
    # Another file, a new one, no output, stdin and JSON objects as inputs: nothing to refuse.
    (tmp_path / "other.jsonl").write_text("")
    for output in ("other.jsonl", "new.jsonl", None):
        check_not_an_input(output, [str(pairs), "-", None, {"a": 1}])
    check_not_an_input("-", ["-"])


def test_the_predict_manager_refuses_before_opening_the_output(pairs, tmp_path):
    link = tmp_path / "link.jsonl"
    link.symlink_to(pairs)
    with pytest.raises(ConfigurationError) as error:
        # No predictor is needed: the refusal comes first.
        CheckedPredictManager(None, str(pairs), str(link), 1, False, False)
    assert str(error.value) == _refusal(link, pairs)
    assert pairs.read_text() == LINE + "\n" + LINE + "\n"
    assert predict_command._PredictManager is CheckedPredictManager


def test_predict_refuses_to_write_over_the_archive_before_loading_it(pairs, tmp_path):
    archive = tmp_path / "model.tar.gz"
    archive.write_bytes(b"not read")
    args = argparse.Namespace(
        archive_file=str(archive),
        input_file=str(pairs),
        weights_file=None,
        output_file=str(archive),
    )
    with pytest.raises(ConfigurationError) as error:
        predict_command._get_predictor(args)
    assert str(error.value) == _refusal(archive, archive)
    assert archive.read_bytes() == b"not read"


@pytest.mark.parametrize(
    "input_file, metrics, predictions, auto_names, data_files, outputs",
    [
        ("a/dev.tsv", "m.json", None, "NONE", ["a/dev.tsv"], ["m.json"]),
        ("a/dev.tsv,b/test.tsv", None, "p1,p2", "NONE", ["a/dev.tsv", "b/test.tsv"], ["p1", "p2"]),
        (
            "a/dev.tsv,b/t.tsv",
            "x",
            "y",
            "ALL",
            ["a/dev.tsv", "b/t.tsv"],
            ["a/dev.outputs", "b/t.outputs", "a/dev.preds", "b/t.preds"],
        ),
        ("a/dev.tsv", "m.json", "p", "PREDS", ["a/dev.tsv"], ["m.json", "a/dev.preds"]),
        ('"a.tsv", {"x": 1}', "m1,m2", None, "NONE", ["a.tsv", {"x": 1}], ["m1", "m2"]),
    ],
)
def test_evaluation_files(input_file, metrics, predictions, auto_names, data_files, outputs):
    assert evaluation_files(input_file, metrics, predictions, auto_names) == (data_files, outputs)


@pytest.mark.parametrize(
    "output_option",
    ["metrics_output_file", "predictions_output_file"],
)
def test_evaluate_refuses_to_write_over_its_data_before_loading_the_archive(
    tmp_path, output_option
):
    dev = tmp_path / "dev.tsv"
    dev.write_text("Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n")
    other = tmp_path / "dev2.tsv"
    other.write_text("")
    link = tmp_path / "link.tsv"
    link.symlink_to(dev)
    with pytest.raises(ConfigurationError) as error:
        evaluate_command.evaluate_from_archive(
            str(tmp_path / "missing.tar.gz"),  # never loaded: the refusal comes first
            f"{other},{dev}",
            **{output_option: f"{tmp_path / 'out'},{link}"},
        )
    assert str(error.value) == _refusal(link, dev)
    # Through the command's own function, with the names --auto-names PREDS gives.
    preds = tmp_path / "dev.preds"
    preds.write_text("data")
    args = argparse.Namespace(
        archive_file=str(tmp_path / "missing.tar.gz"),
        input_file=str(preds),
        output_file=None,
        predictions_output_file="ignored.jsonl",
        batch_size=None,
        overrides="",
        cuda_device=-1,
        embedding_sources_mapping="",
        extend_vocab=False,
        weights_file=None,
        file_friendly_logging=False,
        batch_weight_key="",
        auto_names="PREDS",
    )
    with pytest.raises(ConfigurationError) as error:
        evaluate_command.evaluate_from_args(args)
    assert str(error.value) == _refusal(preds, preds)
    assert preds.read_text() == "data"


def test_evaluate_refuses_two_outputs_that_are_one_file_in_any_spelling(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    dev = tmp_path / "dev.tsv"
    dev.write_text("Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n")
    (tmp_path / "m.json").write_text("kept")
    (tmp_path / "link.json").symlink_to("m.json")
    os.link(tmp_path / "m.json", tmp_path / "hard.json")
    archive = str(tmp_path / "missing.tar.gz")  # never loaded: the refusal comes first
    for metrics, predictions in [
        ("m.json", "m.json"),
        ("m.json", str(tmp_path / "sub/../m.json")),
        ("new.json", "./new.json"),  # not written yet
        ("m.json", "link.json"),
        ("hard.json", "m.json"),
    ]:
        with pytest.raises(ConfigurationError) as error:
            evaluate_command.evaluate_from_archive(
                archive, str(dev), metrics_output_file=metrics, predictions_output_file=predictions
            )
        assert str(error.value) == (
            f"{predictions}: --predictions-output-file is the same file as --output-file "
            f"{metrics}; one would replace the other: give each output a file of its own"
        )
    assert (tmp_path / "m.json").read_text() == "kept" and not (tmp_path / "new.json").exists()
    # Two data files' metrics in one file, too.
    with pytest.raises(ConfigurationError, match=r"^\./m.json: --output-file is the same file as"):
        evaluate_command.evaluate_from_archive(
            archive, f"{dev},{dev}", metrics_output_file="m.json,./m.json"
        )
    # As the `allennlp` program: that one line, exit 1.
    (result,) = forked_allennlp(
        [
            "evaluate",
            archive,
            str(dev),
            "--output-file",
            str(tmp_path / "m.json"),
            "--predictions-output-file",
            str(tmp_path / "m.json"),
        ],
        as_program=True,
    )
    assert result.returncode == 1
    (line,) = [line for line in result.stderr.splitlines() if line.strip()]
    line, log = line.rsplit(" (traceback: ", 1)
    os.remove(log.rstrip(")"))
    assert line == f"error: {tmp_path}/m.json: --predictions-output-file is the same file as " + (
        f"--output-file {tmp_path}/m.json; one would replace the other: give each output a file "
        "of its own"
    )


def test_input_lines_count_blank_lines(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{}\n\n  \r\n{"a": 1}\r\n\t\n[]')
    assert list(input_lines(str(path))) == [
        (f"{path}:1", "{}"),  # the byte-order mark dropped
        (f"{path}:4", '{"a": 1}'),
        (f"{path}:6", "[]"),
    ]
    compressed = tmp_path / "in.jsonl.gz"
    compressed.write_bytes(gzip.compress(b"\n{}\n"))
    assert list(input_lines(str(compressed))) == [(f"{compressed}:2", "{}")]


def test_input_lines_from_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"\n\n{}\n")))
    assert list(input_lines("-")) == [("<stdin>:3", "{}")]
    monkeypatch.setattr(sys, "stdin", io.StringIO("{}\n\n[]\n"))  # no binary buffer
    assert list(input_lines("-")) == [("<stdin>:1", "{}"), ("<stdin>:3", "[]")]


def test_invalid_utf8_names_the_line_and_byte(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{}\n\n{"sentence1": "caf\xe9"}\n')
    lines = input_lines(str(path))
    assert next(lines) == (f"{path}:1", "{}")
    with pytest.raises(MalformedInputError) as error:
        next(lines)
    # `{"sentence1": "caf` is 18 bytes: the bad one is byte 18 of line 3, counting from 0.
    assert str(error.value) == f"{path}:3: invalid UTF-8: invalid continuation byte at byte 18"


class JsonPredictor:
    """A stand-in for a predictor outside the plugin: `load_line` is `json.loads`."""

    _dataset_reader = None

    @staticmethod
    def load_line(line):
        return json.loads(line)


def test_a_stock_predictors_bad_line_is_named_by_file_and_line(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("{}\n\n{oops\n")
    manager = CheckedPredictManager(JsonPredictor(), str(path), None, 1, False, False)
    lines = manager._get_json_data()
    assert next(lines) == {}
    with pytest.raises(MalformedInputError) as error:
        next(lines)
    assert str(error.value).startswith(f"{path}:3: Expecting property name")


@pytest.fixture(scope="module")
def archive(tmp_path_factory, tiny_bert):
    """An MRPC archive trained for one epoch from its config on the fixtures."""
    directory = tmp_path_factory.mktemp("mrpc")
    train_model_from_file(
        CONFIGS_ROOT / "glue/mrpc.jsonnet",
        directory,
        overrides=json.dumps({"trainer.num_epochs": 1}),
        force=True,
    )
    return str(directory / "model.tar.gz")


def test_the_plugins_predictor_names_the_line_in_the_file(archive, tmp_path):
    predictor = unread(Predictor.from_path(archive))
    path = tmp_path / "in.jsonl"
    path.write_text(f"{LINE}\n\n\n{LINE}\n" + json.dumps({**PAIR, "sentence2": ""}) + "\n")
    manager = CheckedPredictManager(predictor, str(path), None, 2, False, False)
    lines = manager._get_json_data()
    assert [next(lines), next(lines)] == [PAIR, PAIR]
    with pytest.raises(MalformedInputError) as error:
        next(lines)
    assert str(error.value) == f"{path}:5: 'sentence2' must be non-empty text, not \"\""
    # A line that is not UTF-8, after a good one.
    path.write_bytes(LINE.encode() + b"\n" + LINE.replace("plays", "pl\xe9ys").encode("latin-1"))
    lines = CheckedPredictManager(predictor, str(path), None, 1, False, False)._get_json_data()
    assert next(lines) == PAIR
    with pytest.raises(MalformedInputError) as error:
        next(lines)
    assert str(error.value) == f"{path}:2: invalid UTF-8: invalid continuation byte at byte 23"
    # Outside `allennlp predict`, lines given one by one are counted as before.
    assert predictor.load_line(LINE) == PAIR
    with pytest.raises(MalformedInputError, match="^input line 2: 'sentence2'"):
        predictor.load_line(json.dumps({**PAIR, "sentence2": ""}))


def _allennlp_predict(archive, *arguments, stdin=None):
    """The real command in a new interpreter (the plugin imported after its arguments)."""
    command = [sys.executable, "-m", "allennlp", "predict", archive, *arguments]
    return subprocess.run(
        command,
        cwd=PROJECT_ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        input=stdin,
    )


def test_allennlp_predict_refuses_an_output_linked_to_its_input(archive, pairs, tmp_path):
    link = tmp_path / "link.jsonl"
    link.symlink_to(pairs)
    result = _allennlp_predict(archive, str(pairs), "--output-file", str(link), "--silent")
    assert result.returncode != 0
    (last,) = result.stderr.strip().splitlines()  # one line, its traceback in a log it names
    assert last.startswith(f"error: {_refusal(link, pairs)} (traceback: "), last
    os.remove(last.rsplit(" ", 1)[-1][:-1])  # the temporary log that keeps the traceback
    assert pairs.read_text() == LINE + "\n" + LINE + "\n"


def test_allennlp_predict_names_file_and_line_from_stdin(archive):
    text = f"{LINE}\n\n\n{LINE}\n" + json.dumps({**PAIR, "sentence2": ""}) + "\n"
    result = _allennlp_predict(archive, "-", stdin=text)
    assert result.returncode != 0
    (last,) = result.stderr.strip().splitlines()
    assert last.startswith("error: <stdin>:5: 'sentence2' must be non-empty text, not \"\""), last
    os.remove(last.rsplit(" ", 1)[-1][:-1])
    # The two lines before it were predicted: their JSON lines through the pipe.
    assert [json.loads(line)["sentence2"] for line in result.stdout.splitlines()] == [
        PAIR["sentence2"]
    ] * 2
