import csv
import json
import os
import subprocess
import sys
import zipfile

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.common.checks import ConfigurationError
from allennlp.predictors import Predictor

from tests import CONFIGS_ROOT, FIXTURES_ROOT, PROJECT_ROOT
from tft_allennlp.commands.glue_submission import write_submission

GLUE = FIXTURES_ROOT / "glue"


@pytest.fixture(scope="module")
def archives(tmp_path_factory, tiny_bert):
    root = tmp_path_factory.mktemp("submission")
    paths = {}
    for task in ("mrpc", "stsb", "mnli"):
        train_model_from_file(
            CONFIGS_ROOT / f"glue/{task}.jsonnet",
            root / task,
            overrides=json.dumps({"trainer.num_epochs": 1}),
        )
        paths[task] = str(root / task / "model.tar.gz")
    return paths


def read_tsv(path):
    with open(path, encoding="utf-8") as handle:
        return list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))


def test_submission_files_hold_every_test_row_as_the_leaderboard_names_them(archives, tmp_path):
    out = tmp_path / "submission"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "allennlp",
            "tft-glue-submission",
            str(out),
            *archives.values(),
            "--glue-dir",
            str(GLUE),
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        env=dict(os.environ),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    expected = {
        "MRPC.tsv": "MRPC/test.tsv",
        "STS-B.tsv": "STS-B/test.tsv",
        "MNLI-m.tsv": "MNLI/test_matched.tsv",
        "MNLI-mm.tsv": "MNLI/test_mismatched.tsv",
        "AX.tsv": "diagnostic/diagnostic.tsv",
    }
    assert sorted(zipfile.ZipFile(out / "submission.zip").namelist()) == sorted(expected)
    assert (
        "Not written (no archive for the task): "
        "CoLA.tsv, SST-2.tsv, QQP.tsv, QNLI.tsv, RTE.tsv, WNLI.tsv" in result.stdout
    )
    for name, test_file in expected.items():
        rows = read_tsv(out / name)
        test = read_tsv(GLUE / test_file)
        assert rows[0] == ["index", "prediction"]
        # One prediction per test row, in the test file's order, under its own index.
        assert [row[0] for row in rows[1:]] == [row[test[0].index("index")] for row in test[1:]]
        task = {"MRPC.tsv": "mrpc", "STS-B.tsv": "stsb"}.get(name, "mnli")
        predictor = Predictor.from_path(archives[task])
        pair = (
            [test[0].index("sentence1"), test[0].index("sentence2")] if task != "mrpc" else [3, 4]
        )
        for row, test_row in zip(rows[1:], test[1:]):
            output = predictor.predict_json(
                {"sentence1": test_row[pair[0]], "sentence2": test_row[pair[1]]}
            )
            if task == "stsb":
                assert row[1] == f"{min(max(output['score'], 0.0), 5.0):.3f}"
            else:
                assert row[1] == output["label"] and row[1] in (
                    ("0", "1") if task == "mrpc" else ("entailment", "neutral", "contradiction")
                )


def test_a_failure_midway_leaves_the_earlier_submission_whole(archives, tmp_path):
    out = tmp_path / "submission"
    # The fixture MRPC test file has 3 rows.
    assert write_submission([archives["mrpc"]], str(out), str(GLUE)) == {"MRPC.tsv": 3}
    before = {name: (out / name).read_bytes() for name in os.listdir(out)}
    assert sorted(before) == ["MRPC.tsv", "submission.zip"]
    # STS-B and MRPC are predicted, then the second MRPC archive is refused.
    with pytest.raises(ConfigurationError, match="Two archives for MRPC.tsv"):
        write_submission(
            [archives["stsb"], archives["mrpc"], archives["mrpc"]], str(out), str(GLUE)
        )
    assert {name: (out / name).read_bytes() for name in os.listdir(out)} == before


def test_a_smart_wrapped_model_predicts_its_task(tmp_path, tiny_bert):
    train_model_from_file(
        CONFIGS_ROOT / "smart/mrpc.jsonnet",
        tmp_path / "smart",
        overrides=json.dumps({"trainer.num_epochs": 1}),
    )
    archive = str(tmp_path / "smart" / "model.tar.gz")
    assert write_submission([archive], str(tmp_path / "out"), str(GLUE)) == {"MRPC.tsv": 3}
    predictor = Predictor.from_path(archive)
    test = read_tsv(GLUE / "MRPC/test.tsv")
    labels = [
        predictor.predict_json({"sentence1": r[3], "sentence2": r[4]})["label"] for r in test[1:]
    ]
    assert [row[1] for row in read_tsv(tmp_path / "out" / "MRPC.tsv")[1:]] == labels
