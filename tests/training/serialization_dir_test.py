"""
`allennlp train -s DIR` with the plugin loaded (`tft_allennlp.training.serialization_dir`):
`--force` and `--recover` never take a directory that is, or holds, what the config reads, and a
second `allennlp train` on a directory that a live run holds (its lock) is refused.
"""

import json
import os
import tarfile
import time

import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.training import util as training_util

from tests import CONFIGS_ROOT
from tests.allennlp_cli import fork_allennlp, forked_allennlp, write_config
from tests.held_locks import died_holding
from tft_allennlp.common.folder_lock import HOST, LOCK_FILE, FolderLock
from tft_allennlp.training.serialization_dir import left_by_a_failed_start, run_contents

HOLD = "tests.training.callbacks.hold"


def _tree(directory):
    """Every file under `directory` (relative path) with its bytes."""
    return {
        os.path.relpath(os.path.join(root, name), directory): open(
            os.path.join(root, name), "rb"
        ).read()
        for root, _, names in os.walk(directory)
        for name in names
    } | {os.path.relpath(root, directory): b"" for root, _, _ in os.walk(directory)}


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


def test_a_second_train_on_a_live_run_is_refused_in_one_line_and_touches_nothing(tmp_path):
    # The first run is held at its start: config.json, meta.json, out.log and the vocabulary
    # written, nothing trained, which is what a failed start leaves.
    release, holding = tmp_path / "release", tmp_path / "holding"
    hold = {"type": "test_hold", "release": str(release), "holding": str(holding)}
    config = write_config(
        tmp_path / "config.json",
        CONFIGS_ROOT / "glue/mrpc.jsonnet",
        {"trainer.num_epochs": 1},
        lambda params: params["trainer"]["callbacks"].append(hold),
    )
    run = tmp_path / "run"
    train = ["train", str(config), "-s", str(run), "--include-package", HOLD]
    with open(tmp_path / "first.out", "w") as out, open(tmp_path / "first.err", "w") as err:
        first = fork_allennlp(train, out, err)
    deadline = time.monotonic() + 60
    while not holding.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    owner = json.loads((run / LOCK_FILE).read_text())
    before = _tree(run)
    assert {"config.json", "meta.json", "out.log", "vocabulary", LOCK_FILE} <= set(before)
    # Again, to continue it, to start it again: each refused in one line naming the directory
    # and the live run, exit 1, with the directory as it was.
    seconds = time.monotonic()
    refused = forked_allennlp(train, train + ["--recover"], train + ["--force"], as_program=True)
    assert time.monotonic() - seconds < 20
    for result in refused:
        assert result.returncode == 1, result.stderr[-3000:]
        (line,) = [line for line in result.stderr.splitlines() if line.strip()]
        assert line.startswith(
            f"error: {run}: in use by allennlp train, process {owner['pid']} on {owner['host']}, "
            f"since {owner['since']}; wait until it ends, or write elsewhere (traceback: "
        ), line
        os.remove(line.rsplit("(traceback: ", 1)[1].rstrip(")"))
    assert _tree(run) == before
    release.touch()
    assert first() == 0, (tmp_path / "first.err").read_text()[-3000:]
    # The first run's directory, whole: its own config, its metrics and archive, no lock left.
    assert json.loads((run / "config.json").read_text()) == json.loads(config.read_text())
    assert json.loads((run / "metrics.json").read_text())["epoch"] == 0
    assert not [name for name in os.listdir(run) if "tft-lock" in name]
    with tarfile.open(run / "model.tar.gz") as archive:
        assert not [name for name in archive.getnames() if "tft-lock" in name]


def test_recover_and_the_failed_start_reuse_never_take_the_lock_for_a_run(tmp_path):
    # What a kill leaves before the run's first file: its lock (a dead process's), maybe a
    # draft of it. A new run reuses the directory; --recover starts from scratch there.
    run = tmp_path / "run"
    died_holding(run)
    (run / f"{LOCK_FILE}.{HOST}.1.tmp").write_text("")
    assert run_contents(str(run)) == [] and not left_by_a_failed_start(str(run))
    training_util.create_serialization_dir(Params({}), str(run), False, False)
    (run / "config.json").write_text("{}")
    (run / "out.log").write_text("")
    assert left_by_a_failed_start(str(run))
    training_util.create_serialization_dir(Params({}), str(run), False, False)
    assert sorted(os.listdir(run)) == sorted([LOCK_FILE, f"{LOCK_FILE}.{HOST}.1.tmp"])
    # --force deletes the run, never the lock of the process that holds the directory.
    (run / "model_state_e1_b0.th").write_text("")
    with FolderLock(str(run)):
        training_util.create_serialization_dir(Params({}), str(run), False, True)
        assert os.listdir(run) == [LOCK_FILE]
