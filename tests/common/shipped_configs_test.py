"""
The shipped configs by their relative paths from any folder (`config_defaults.shipped_config`, a
host patch): the README's commands as written, run from an empty folder.
"""

import json
import logging
import os

from allennlp.common import Params

from tests.console_test import allennlp
from tft_allennlp.common.config_defaults import CONFIGS_ROOT, shipped_config

MRPC = os.path.join(CONFIGS_ROOT, "glue", "mrpc.jsonnet")


def test_a_missing_training_configs_path_names_the_shipped_config(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert shipped_config("training_configs/glue/mrpc.jsonnet") == MRPC
    assert shipped_config("./training_configs/glue/../glue/mrpc.jsonnet") == MRPC
    # Only under training_configs/, only files that are there, only relative paths.
    for path in (
        "training_configs/glue/nothing.jsonnet",
        "training_configs/glue",
        "training_configs/../setup.py",
        "glue/mrpc.jsonnet",
        "/training_configs/glue/mrpc.jsonnet",
        "https://example.org/training_configs/glue/mrpc.jsonnet",
    ):
        assert shipped_config(path) is None, path
    # A file of that name here always wins.
    local = tmp_path / "training_configs/glue/mrpc.jsonnet"
    local.parent.mkdir(parents=True)
    local.write_text('{"mine": 1}')
    assert shipped_config("training_configs/glue/mrpc.jsonnet") is None
    assert Params.from_file("training_configs/glue/mrpc.jsonnet").as_dict() == {"mine": 1}


def test_params_read_the_shipped_config_and_say_so(tmp_path, monkeypatch, caplog):
    monkeypatch.chdir(tmp_path)
    with caplog.at_level(logging.INFO, logger="tft_allennlp.common.config_defaults"):
        params = Params.from_file("training_configs/injection/tft.jsonnet")
    assert params["model"]["type"]
    shipped = os.path.join(CONFIGS_ROOT, "injection", "tft.jsonnet")
    assert [r.getMessage() for r in caplog.records] == [f"using the shipped config {shipped}"]


def test_the_readme_training_runs_from_an_empty_folder(tmp_path, tiny_bert):
    """`allennlp train training_configs/glue/mrpc.jsonnet -s runs/x`, as the README writes it."""
    site, folder = tmp_path / "site", tmp_path / "empty"
    site.mkdir()
    folder.mkdir()
    overrides = json.dumps({"trainer.num_epochs": 1})
    train = ["train", "training_configs/glue/mrpc.jsonnet", "-s", "runs/x", "-o", overrides]
    result = allennlp(train, folder, site, TFT_MODEL=tiny_bert)
    assert result.returncode == 0, result.stderr[-3000:]
    # The first line on the terminal (AllenNLP logs to standard error), and the only one.
    assert result.stderr.splitlines()[0] == f"using the shipped config {MRPC}"
    assert (result.stdout + result.stderr).count("shipped config") == 1
    assert (folder / "runs/x/model.tar.gz").is_file()
    assert sorted(os.listdir(folder)) == ["runs"]  # nothing was copied
