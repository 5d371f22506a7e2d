"""
Seeded fuzzing of both predictors as `allennlp predict` runs them: valid input lines, some blank
ones, and randomly chosen lines broken in ways that always make them invalid. Prediction must
stop at the first broken line with a one-line `MalformedInputError` naming its file and line
number (blank lines counted), after predicting every batch before the one that holds it; with
nothing broken, every line is predicted.
"""

import json
import os
import random
import re
import subprocess
import sys

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.predictors import Predictor

from tests import CONFIGS_ROOT, FIXTURES_ROOT, PROJECT_ROOT
from tests.predictors import unread
from tft_allennlp.common.input_problems import MalformedInputError
from tft_allennlp.predictors.allennlp_commands import CheckedPredictManager


@pytest.fixture(scope="module")
def archives(tmp_path_factory, tiny_bert):
    """An injection archive and an MRPC archive, each trained for one epoch on the fixtures."""
    split = {
        "dataset_reader.validation_fraction": 0.25,
        "validation_dataset_reader.validation_fraction": 0.25,
    }
    paths = {}
    for name, config, overrides in (
        ("injection", "injection/tft.jsonnet", split),
        ("mrpc", "glue/mrpc.jsonnet", {}),
    ):
        directory = tmp_path_factory.mktemp(name)
        overrides = json.dumps({**overrides, "trainer.num_epochs": 1})
        train_model_from_file(CONFIGS_ROOT / config, directory, overrides=overrides)
        paths[name] = str(directory / "model.tar.gz")
    return paths


@pytest.fixture(scope="module")
def predictors(archives):
    return {name: Predictor.from_path(path) for name, path in archives.items()}


def phrase_pair_lines():
    """Every input layout of `tft_phrase_pairs`, for each record of the fixture corpus."""
    lines = []
    for raw in open(FIXTURES_ROOT / "paraphrase/aligned.jsonl"):
        record = json.loads(raw)
        words = {key: record[key] for key in ("source", "target")}
        texts = {"sentence1": " ".join(record["source"]), "sentence2": " ".join(record["target"])}
        inventories = {key: record[key] for key in ("source_phrases", "target_phrases")}
        lines += [
            {**words, **inventories},
            {**words, "phrase_pairs": record["alignments"]},
            {**texts, "phrase_pairs": record["alignments"]},
        ]
    lines += [{"source": ["A", "man", "sleeps", "."], "sentence2": "A man is asleep ."}]
    return [json.dumps(line) for line in lines]


def sentence_pair_lines():
    rows = [line.rstrip("\n").split("\t") for line in open(FIXTURES_ROOT / "glue/MRPC/train.tsv")]
    return [json.dumps({"sentence1": r[3], "sentence2": r[4], "id": r[1]}) for r in rows[1:]]


def edit(change):
    """A breaker that applies `change` to the line's record."""

    def breaker(line):
        record = json.loads(line)
        change(record)
        return json.dumps(record)

    return breaker


def text_side(record, side, text):
    words_key, text_key = {"source": ("source", "sentence1"), "target": ("target", "sentence2")}[
        side
    ]
    record.pop(words_key, None)
    record[text_key] = text


def pairs(record, value):
    for key in ("source_phrases", "target_phrases"):
        record.pop(key, None)
    record["phrase_pairs"] = value


def inventories(record, source, target):
    record.pop("phrase_pairs", None)
    record["source_phrases"], record["target_phrases"] = source, target


def common_breakers():
    return [
        lambda line: line[: len(line) // 2],  # truncated JSON
        lambda line: "[" + line + "]",  # a JSON array, not an object
    ]


def phrase_pair_breakers():
    return common_breakers() + [
        edit(lambda r: text_side(r, "source", "")),
        edit(lambda r: text_side(r, "target", " \t ")),
        edit(lambda r: text_side(r, "target", None)),
        edit(lambda r: r.update(source=[])),
        edit(lambda r: r.update(target="A man plays the flute .")),  # text for a word list
        edit(lambda r: r.update(source=["A", 3])),
        edit(lambda r: r.update(target=["A", None])),
        edit(lambda r: r.update(source=["A", ["man"]])),
        edit(lambda r: r.update(source=["A", " "])),
        edit(lambda r: [r.pop(key, None) for key in ("target", "sentence2")]),
        edit(lambda r: pairs(r, [[["0", 1], [0, 0]]])),  # a string in a span
        edit(lambda r: pairs(r, [[[0, 0], [0, 1.5]]])),  # a float in a span
        edit(lambda r: pairs(r, [[[0, 0], [0]]])),  # one number, not two
        edit(lambda r: pairs(r, None)),
        edit(lambda r: pairs(r, [[0, 1], [0, 0]])),  # a flat pair, not a list of pairs
        edit(lambda r: pairs(r, [[[1, 0], [0, 0]]])),  # reversed
        edit(lambda r: pairs(r, [[[0, 0], [0, 1000]]])),  # out of range
        edit(lambda r: pairs(r, [[[-1, 0], [0, 0]]])),  # out of range
        edit(lambda r: inventories(r, [[0, 0]], "0 1")),
        edit(lambda r: inventories(r, [[2, 1]], [[0, 0]])),  # reversed
        edit(lambda r: inventories(r, [[0, 0]], [[True, 1]])),
        edit(lambda r: [inventories(r, [[0, 0]], []), r.pop("target_phrases")]),
    ]


def sentence_pair_breakers():
    return common_breakers() + [
        edit(lambda r: r.update(sentence1="")),
        edit(lambda r: r.update(sentence2="  \n ")),
        edit(lambda r: r.update(sentence2=None)),
        edit(lambda r: r.update(sentence1=7)),
        edit(lambda r: r.update(sentence1=r["sentence1"].split())),
        edit(lambda r: r.pop("sentence2")),  # MRPC takes two sentences
        edit(lambda r: r.update(sentence=r.pop("sentence1"), sentence2=[])),
        edit(lambda r: [r.pop("sentence1"), r.pop("sentence2")]),
    ]


def write_broken(path, lines, breakers, rng):
    """
    Writes `lines`, breaking about a fifth and putting blank lines between some; returns, for
    each broken one, its number among the non-blank lines and its line number in the file
    (both from 1).
    """
    broken = {}
    line_number = 0
    with open(path, "w") as handle:
        for number, line in enumerate(lines, start=1):
            is_broken = rng.random() < 0.2
            if is_broken:
                line = rng.choice(breakers)(line)
            if rng.random() < 0.2:
                handle.write(" \n")
                line_number += 1
            handle.write(line + "\n")
            line_number += 1
            if is_broken:
                broken[number] = line_number
    return broken


def predict(predictor, input_path, output_path, batch_size):
    """`allennlp predict` as `allennlp.commands.predict` runs it, in this process."""
    manager = CheckedPredictManager(
        unread(predictor), input_path, output_path, batch_size, False, False
    )
    try:
        manager.run()
    finally:
        manager._output_file.close()
    return open(output_path).read().splitlines()


CASES = {
    "injection": (phrase_pair_lines, phrase_pair_breakers),
    "mrpc": (sentence_pair_lines, sentence_pair_breakers),
}
# Lines that failed deep inside transformers or the reader before the predictors checked them.
DEEP_FAILURES = {
    "injection": edit(lambda r: pairs(r, [[0, 1], [0, 0]])),
    "mrpc": edit(lambda r: r.update(sentence1=7)),
}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("seed", range(8))
def test_predictors_name_the_first_broken_line(predictors, tmp_path, name, seed):
    rng = random.Random(seed)
    make_lines, breakers = CASES[name]
    lines = make_lines()
    lines = rng.sample(lines, min(len(lines), 16))
    input_path, output_path = str(tmp_path / "input.jsonl"), str(tmp_path / "output.jsonl")
    broken = write_broken(input_path, lines, breakers(), rng)
    batch_size = rng.choice([1, 2, 3])
    if not broken:
        assert len(predict(predictors[name], input_path, output_path, batch_size)) == len(lines)
        return
    first = min(broken)
    with pytest.raises(MalformedInputError) as error:
        predict(predictors[name], input_path, output_path, batch_size)
    message = str(error.value)
    where = f"{input_path}:{broken[first]}: "
    assert "\n" not in message and message.startswith(where), message
    # Nothing is predicted for the batch holding the broken line; all batches before it are.
    assert len(open(output_path).read().splitlines()) == (first - 1) // batch_size * batch_size


def test_every_valid_line_is_predicted(predictors, tmp_path):
    """Each valid layout on its own, so that no breaker above passes for lack of valid lines."""
    for name, (make_lines, _) in CASES.items():
        lines = make_lines()
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        outputs = predict(predictors[name], str(path), str(tmp_path / f"{name}.out"), 4)
        assert len(outputs) == len(lines)


@pytest.mark.parametrize("name", CASES)
def test_allennlp_predict_names_the_line(archives, tmp_path, name):
    """The real command: its one line of stderr names file and line, raised by the predictor."""
    lines = CASES[name][0]()[:4]
    lines[2] = DEEP_FAILURES[name](lines[2])
    path = tmp_path / "input.jsonl"
    path.write_text(lines[0] + "\n\n" + "\n".join(lines[1:]) + "\n")
    command = [sys.executable, "-m", "allennlp", "predict", archives[name], str(path)]
    command += ["--output-file", str(tmp_path / "output.jsonl"), "--silent"]
    result = subprocess.run(
        command, cwd=PROJECT_ROOT, env=dict(os.environ), capture_output=True, text=True
    )
    assert result.returncode != 0
    # One line (after the phrase predictor's note of the spaCy model it uses), no traceback; the
    # third JSON line is the file's fourth: the blank line counts.
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith(f"error: {path}:4: "), result.stderr
    assert "Traceback" not in result.stderr
    # The traceback, in the log that the line names.
    log = re.search(r"\(traceback: (\S+)\)$", line).group(1)
    trace = (PROJECT_ROOT / log).read_text().splitlines()
    os.remove(PROJECT_ROOT / log)
    assert re.match(rf"\S*MalformedInputError: {re.escape(str(path))}:4: ", trace[-1]), trace[-1]
    raising_frame = [line for line in trace if line.lstrip().startswith("File ")][-1]
    assert "tft_allennlp/predictors" in raising_frame, raising_frame
