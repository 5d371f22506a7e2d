"""
Runs taken from other grids (`reuse.py`): only a finished run whose trained config is the same,
paths read as this grid's, and configs older grids wrote.
"""

import json

from tft_experiments.reuse import config_difference, find_reusable
from tft_experiments.runs import InjectionRun


def test_configs_are_compared_with_the_other_grids_paths_read_as_this_ones():
    mine = {
        "model": {"model_name": "/b/injection/tiny/tft/encoder", "lr": 1e-4},
        "train_data_path": "/data/train.tsv",
        "trainer": {"callbacks": [{"type": "tft_rng_checkpoint"}]},
    }
    theirs = {
        "model": {"model_name": "/a/injection/tiny/tft/encoder", "lr": 1e-4},
        "train_data_path": "/data/train.tsv",
        "trainer": {"callbacks": [{"type": "tft_rng_checkpoint"}]},
    }
    assert config_difference(mine, theirs, "/a", "/b") is None
    # A path outside the other grid is compared as it is.
    assert config_difference(mine, theirs, "/data", "/b") == "model.model_name"
    other_lr = {**theirs, "model": {**theirs["model"], "lr": 2e-4}}
    assert config_difference(mine, other_lr, "/a", "/b") == "model.lr"
    assert config_difference(mine, {**theirs, "extra": 1}, "/a", "/b") == "extra"
    fewer = {**theirs, "trainer": {"callbacks": []}}
    assert config_difference(mine, fewer, "/a", "/b") == "trainer.callbacks"


def test_only_a_finished_run_with_the_same_trained_config_is_reusable(tmp_path):
    run = InjectionRun("tiny", "tft", str(tmp_path / "b/injection/tiny/tft"))
    config = {"model": {"lr": 1e-4}, "trainer": {"callbacks": [{"type": "tft_rng_checkpoint"}]}}
    theirs = tmp_path / "a/injection/tiny/tft"
    theirs.mkdir(parents=True)
    # A callback that only writes a record is not compared; any other is.
    recorded = [{"type": "tft_rng_checkpoint"}, {"type": "tft_parameter_counts"}]
    (theirs / "config.json").write_text(json.dumps({**config, "trainer": {"callbacks": recorded}}))
    (theirs / "metrics.json").write_text("{}")
    grids = [str(tmp_path / "a")]
    # An injection without its exported encoder is not finished, so not reusable.
    assert find_reusable(run, config, str(tmp_path / "b"), grids) is None
    (theirs / "encoder").mkdir()
    (theirs / "encoder/config.json").write_text("{}")
    assert find_reusable(run, config, str(tmp_path / "b"), grids) == grids[0]
    other = {**config, "trainer": {"callbacks": [{"type": "tft_recover_finished_run"}]}}
    differences: list = []
    assert find_reusable(run, other, str(tmp_path / "b"), grids, differences) is None
    # The grid that finished it with another config is named, with the first key that differs.
    assert differences == [(grids[0], "trainer.callbacks.0.type")]


def test_a_run_made_before_archives_held_their_encoder_files_is_reusable(tmp_path):
    run = InjectionRun("tiny", "tft", str(tmp_path / "b/injection/tiny/tft"))
    theirs = tmp_path / "a/injection/tiny/tft"
    (theirs / "encoder").mkdir(parents=True)
    (theirs / "encoder/config.json").write_text("{}")
    (theirs / "metrics.json").write_text("{}")

    def reader(kind, lr=None):
        return {
            "tokenizer": {"type": kind, "model_name": "m", "add_special_tokens": False},
            "token_indexers": {"tokens": {"type": kind, "model_name": "m"}},
            **({} if lr is None else {"lr": lr}),
        }

    old = {"dataset_reader": reader("pretrained_transformer"), "model": {"lr": 1e-4}}
    (theirs / "config.json").write_text(json.dumps(old))
    grids = [str(tmp_path / "a")]
    new = {
        "dataset_reader": reader("tft_pretrained_transformer"),
        "include_in_archive": ["pretrained_transformers"],
        "model": {"lr": 1e-4},
    }
    assert find_reusable(run, new, str(tmp_path / "b"), grids) == grids[0]
    # Everything else is still compared, inside the reader too.
    other = {**new, "dataset_reader": reader("tft_pretrained_transformer", lr=1)}
    assert find_reusable(run, other, str(tmp_path / "b"), grids) is None
    other = {**new, "dataset_reader": reader("whitespace")}
    assert find_reusable(run, other, str(tmp_path / "b"), grids) is None


def test_a_run_whose_config_declared_its_task_labels_is_reusable(tmp_path):
    run = InjectionRun("tiny", "tft", str(tmp_path / "b/injection/tiny/tft"))
    theirs = tmp_path / "a/injection/tiny/tft"
    (theirs / "encoder").mkdir(parents=True)
    (theirs / "encoder/config.json").write_text("{}")
    (theirs / "metrics.json").write_text("{}")
    grids = [str(tmp_path / "a")]

    def config(task, **vocabulary):
        return {"vocabulary": {"type": "from_instances", **vocabulary}, "model": {"task": task}}

    # Before, the configs declared each task's labels; now the model adds them itself.
    for task, labels in [("mrpc", ["0", "1"]), ("stsb", []), ("rte", RTE_LABELS)]:
        (theirs / "config.json").write_text(
            json.dumps(config(task, tokens_to_add={"labels": labels}))
        )
        assert find_reusable(run, config(task), str(tmp_path / "b"), grids) == grids[0]
    # Labels in another order, or another namespace, make another vocabulary.
    for vocabulary in [{"labels": ["1", "0"]}, {"labels": ["0", "1"], "tags": ["x"]}]:
        (theirs / "config.json").write_text(json.dumps(config("mrpc", tokens_to_add=vocabulary)))
        assert find_reusable(run, config("mrpc"), str(tmp_path / "b"), grids) is None


RTE_LABELS = ["entailment", "not_entailment"]
