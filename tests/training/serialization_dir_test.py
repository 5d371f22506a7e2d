"""
`allennlp train -s DIR` with the plugin loaded (`tft_allennlp.training.serialization_dir`):
`--force` and `--recover` never take a directory that is, or holds, what the config reads.
"""

import os

import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.training import util as training_util


def _config(train_path: str, model: str = "bert-base-uncased") -> Params:
    return Params(
        {
            "train_data_path": train_path,
            "model": {"embedder": {"model_name": model}, "labels": ["0", "1"]},
        }
    )


def test_force_never_deletes_a_file_the_config_reads(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "train.tsv").write_text("my data")
    (run / "model_state_e0.th").write_text("")
    with pytest.raises(ConfigurationError) as error:
        training_util.create_serialization_dir(
            _config(str(run / "train.tsv")), str(run), False, True
        )
    assert str(error.value) == (
        f"Serialization directory {run} holds {run / 'train.tsv'}, which the config reads "
        "(train_data_path); --force would delete it: give another -s directory."
    )
    assert (run / "train.tsv").read_text() == "my data"
    # Through a symbolic link, and a folder the config reads (a checkpoint) in it, as --recover.
    os.symlink(run, tmp_path / "link")
    (run / "bert").mkdir()
    config = _config(str(tmp_path / "elsewhere.tsv"), model=str(tmp_path / "link/bert"))
    with pytest.raises(ConfigurationError, match=r"\(model.embedder.model_name\): give another"):
        training_util.create_serialization_dir(config, str(run), True, False)
    assert sorted(os.listdir(run)) == ["bert", "model_state_e0.th", "train.tsv"]


def test_force_still_starts_again_where_the_config_reads_nothing(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "model_state_e0.th").write_text("")
    (tmp_path / "train.tsv").write_text("my data")
    training_util.create_serialization_dir(
        _config(str(tmp_path / "train.tsv")), str(run), False, True
    )
    assert not run.exists() or os.listdir(run) == []
    assert (tmp_path / "train.tsv").read_text() == "my data"
