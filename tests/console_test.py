"""
What `allennlp` commands print with the plugin installed, as a user sees it: the wheel's start-up
hook (`tft_allennlp.pth`) in place, run from a folder without `.allennlp_plugins`, offline, and
with no nltk data at all.
"""

import json
import logging
import os
import re
import subprocess
import sys

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.common.checks import ConfigurationError
from allennlp.training import util as training_util

from tests import CONFIGS_ROOT, PROJECT_ROOT
from tft_allennlp.common.console import ConsoleFormatter, QuietFilter, model_hint
from tft_allennlp_autoload import write_hook

# The noise the issue counted, none of which may reach the terminal of a normal run.
NOISE = (
    "common.params",
    "Tunable",
    "Plugin ",
    "pkg_resources",
    "nltk_data",
    "autocast",
    "patience",
)


def allennlp(arguments, cwd, site, **environment):
    """`allennlp ARGUMENTS` with the wheel's start-up hook, as an installed package runs it."""
    write_hook(str(site))
    program = (
        f"import site, sys; site.addsitedir({str(site)!r}); sys.argv[0] = 'allennlp'; "
        "from allennlp.__main__ import run; run()"
    )
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("TFT_MODEL", "TFT_VERBOSE", "ALLENNLP_LOG_LEVEL")
    }
    env.update(PYTHONPATH=str(PROJECT_ROOT), NLTK_DATA=str(site / "no_nltk_data"), **environment)
    return subprocess.run(
        [sys.executable, "-c", program, *arguments],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )


def test_a_tiny_run_prints_progress_and_results_only(tmp_path, tiny_bert):
    site, folder = tmp_path / "site", tmp_path / "elsewhere"
    site.mkdir()
    folder.mkdir()
    config = str(CONFIGS_ROOT / "glue/mrpc.jsonnet")
    train = ["train", config, "-s", "run", "-o", json.dumps({"trainer.num_epochs": 1})]
    # TFT_MODEL unset and offline: one line that names the variable, not the hub's traceback.
    failed = allennlp(train, folder, site)
    assert failed.returncode == 1
    assert failed.stderr.strip().splitlines()[-1].startswith("error: TFT_MODEL is not set")
    assert "Traceback" not in failed.stdout + failed.stderr
    # The same command again, the variable set: the failed start does not block it.
    result = allennlp(train, folder, site, TFT_MODEL=tiny_bert)
    assert result.returncode == 0, result.stderr[-3000:]
    # Lines as a terminal shows them: a progress bar redraws its line with carriage returns.
    printed = (result.stdout + result.stderr).strip().split("\n")
    assert not [line for line in printed if any(noise in line for noise in NOISE)]
    assert any("trained nothing" in line for line in printed)  # the reused directory, named
    assert any(line.startswith("f1 ") for line in printed)  # the epoch's metrics table
    assert sum('"validation_f1"' in line for line in printed) == 1  # the final metrics
    # 31 lines: the reuse warning, the parameter count, "Epoch 0/0", the epoch's metrics table
    # (6) and the final metrics (20), and a line each for the training and validation bars
    # (through a pipe: whole lines, no carriage returns, no empty vocabulary bar; on a terminal,
    # tests/common/progress_test.py). Before: 249 (docs/runs.md).
    assert len(printed) <= 32, "\n".join(printed)
    assert "\r" not in result.stderr and not re.search(r"\b0it\b", result.stderr)  # no empty bar
    assert "Loading weights" not in result.stderr  # transformers' bar over local work
    log = (folder / "run/out.log").read_text()
    assert log.count("common.params") > 50 and "Number of trainable parameters" in log
    # The whole log is back with TFT_VERBOSE=1; transformers' bars over local work are not log.
    verbose = allennlp(
        ["train", config, "-s", "run2", "-o", json.dumps({"trainer.num_epochs": 1})],
        folder,
        site,
        TFT_MODEL=tiny_bert,
        TFT_VERBOSE="1",
    )
    assert verbose.returncode == 0, verbose.stderr[-3000:]
    assert "Plugin tft_allennlp available" in verbose.stderr
    assert "common.params" in verbose.stderr and "Loading weights" not in verbose.stderr


def test_the_quiet_terminal_keeps_warnings_and_results():
    def record(name, level, message):
        return logging.LogRecord(name, level, __file__, 1, message, (), None)

    quiet = QuietFilter()
    assert not quiet.filter(record("allennlp.common.params", logging.INFO, "model.type = x"))
    assert not quiet.filter(record("allennlp.common.plugins", logging.INFO, "Plugin x available"))
    assert quiet.filter(record("tft_allennlp.dataset_readers.glue", logging.WARNING, "Skipped 2"))
    assert not quiet.filter(
        record(
            "allennlp.training.gradient_descent_trainer",
            logging.WARNING,
            "patience was set to None",
        )
    )
    assert quiet.filter(
        record("allennlp.training.callbacks.console_logger", logging.INFO, "f1 | 1")
    )
    assert quiet.filter(record("allennlp.common.util", logging.INFO, "Metrics: {}"))
    assert quiet.filter(record("tft_allennlp.archives.encoder_export", logging.INFO, "Wrote enc"))
    assert quiet.filter(record("tft_experiments.runner", logging.INFO, "Finished run"))
    formatted = ConsoleFormatter().format(record("x", logging.WARNING, "look"))
    assert formatted == "WARNING: look"


def test_the_model_hint_is_for_the_unset_default_only(monkeypatch):
    monkeypatch.delenv("TFT_MODEL", raising=False)
    offline = OSError("We couldn't connect to 'https://huggingface.co' to load bert-base-uncased")
    try:
        try:
            raise offline
        except OSError as error:
            raise ConfigurationError("could not build the tokenizer") from error
    except ConfigurationError as wrapped:
        assert "TFT_MODEL is not set" in model_hint(wrapped)
    assert model_hint(OSError("no such file: my_model")) is None

    # transformers 5's message names no model; the loading call's argument does.
    def load(pretrained_model_name_or_path):
        raise OSError("We couldn't connect to 'https://huggingface.co' to load the files")

    for name, hinted in (("bert-base-uncased", True), ("roberta-base", False)):
        try:
            load(name)
        except OSError as error:
            assert (model_hint(error) is not None) is hinted, name
    monkeypatch.setenv("TFT_MODEL", "bert-base-uncased")
    assert model_hint(offline) is None


def test_a_directory_with_a_trained_checkpoint_is_still_refused(tmp_path):
    leftover = tmp_path / "failed"
    (leftover / "vocabulary").mkdir(parents=True)
    (leftover / "config.json").write_text("{}")
    (leftover / "out.log").write_text("")
    trained = tmp_path / "trained"
    trained.mkdir()
    (trained / "config.json").write_text("{}")
    (trained / "model_state_e0.th").write_text("")
    from allennlp.common import Params

    training_util.create_serialization_dir(Params({}), str(leftover), False, False)
    assert os.listdir(leftover) == []
    with pytest.raises(ConfigurationError, match="add --recover to continue it, --force"):
        training_util.create_serialization_dir(Params({}), str(trained), False, False)
    assert sorted(os.listdir(trained)) == ["config.json", "model_state_e0.th"]


def test_checkpoints_keep_the_best_and_the_latest(tmp_path):
    train_model_from_file(
        str(CONFIGS_ROOT / "glue/rte.jsonnet"),
        str(tmp_path),
        overrides=json.dumps({"trainer.num_epochs": 3}),
    )
    states = sorted(name for name in os.listdir(tmp_path) if name.endswith(".th"))
    # A checkpoint is named after the epochs completed: the latest is e3, the best epoch's
    # (kept with best.th, tft_atomic) e(best + 1), not e2, which is neither.
    best = json.loads((tmp_path / "metrics.json").read_text())["best_epoch"]
    assert best in (0, 1)
    assert states == [
        "best.th",
        f"model_state_e{best + 1}_b0.th",
        "model_state_e3_b0.th",
        f"training_state_e{best + 1}_b0.th",
        "training_state_e3_b0.th",
    ]
