"""
`allennlp tft-tune`: the trials train on the training data less a carved-out part and validate
on that part; a killed study goes on from its storage (the killed trial from its checkpoint);
two processes share one study; the best trial's command.
"""

import json
import types

import optuna
import pytest
from allennlp.common.checks import ConfigurationError
from allennlp.training.metric_tracker import MetricTracker

from tests import CONFIGS_ROOT, FIXTURES_ROOT
from tests.allennlp_cli import forked_allennlp
from tft_allennlp.training.callbacks.optuna_pruning import OptunaPruning, training_trial
from tft_allennlp.training.tuning import (
    DIRECTORY,
    RESUMES,
    SearchSpace,
    open_storage,
    trial_config,
)

MRPC = str(CONFIGS_ROOT / "glue/mrpc.jsonnet")
TRAIN = str(FIXTURES_ROOT / "glue/MRPC/train.tsv")
ONE_EPOCH = json.dumps({"trainer.num_epochs": 1})


def trials_of(directory, storage=None):
    storage = storage or f"sqlite:///{directory}/study.db"
    study = optuna.load_study(study_name="tft-tune", storage=open_storage(storage))
    return study.get_trials()


def test_trials_validate_on_a_part_carved_from_the_training_data(tmp_path, tiny_bert):
    directory = tmp_path / "tune"
    arguments = ["tft-tune", MRPC, "-s", str(directory), "--trials", "3", "--seed", "1"]
    (result,) = forked_allennlp([*arguments, "-o", ONE_EPOCH], as_program=True)
    assert result.returncode == 0, result.stderr[-3000:]
    trials = trials_of(directory)
    assert [trial.state.name for trial in trials] == ["COMPLETE"] * 3
    for trial in trials:
        config = json.loads((directory / f"trials/{trial.number}/config.json").read_text())
        # The training reader holds a tenth of the training file out; validation reads it.
        assert config["validation_data_path"] == config["train_data_path"] == TRAIN
        assert config["dataset_reader"]["held_out_fraction"] == 0.1
        assert config["validation_dataset_reader"]["held_out"] is True
        assert (
            config["validation_dataset_reader"]["tokenizer"]
            == config["dataset_reader"]["tokenizer"]
        )
        assert config["trainer"]["callbacks"][-1] == {"type": "tft_optuna_pruning"}
        # The default range: a factor of 5 either side of the config's 3e-5, on a log scale.
        lr = trial.params["trainer.optimizer.lr"]
        assert config["trainer"]["optimizer"]["lr"] == lr and 6e-6 <= lr <= 1.5e-4
        metrics = json.loads((directory / f"trials/{trial.number}/metrics.json").read_text())
        assert trial.value == metrics["best_validation_combined_score"]
    assert len({trial.params["trainer.optimizer.lr"] for trial in trials}) == 3
    best = max(trials, key=lambda trial: trial.value)
    written = json.loads((directory / "best.json").read_text())
    assert written["best_trial"] == best.number and written["value"] == best.value
    overrides = {
        "trainer.num_epochs": 1,
        "trainer.optimizer.lr": best.params["trainer.optimizer.lr"],
    }
    command = f"allennlp train {MRPC} -s OUTPUT_DIR -o '{json.dumps(overrides)}'"
    assert written["command"] == command
    # (After a training in the forked command, its log handler writes to stdout.)
    lines = result.stderr.splitlines() + result.stdout.splitlines()
    # A line per trial, its values, then its score; the trainings' tables stay in their logs.
    for trial in trials:
        values = f"Trial {trial.number}: trainer.optimizer.lr "
        assert sum(line.startswith(values) for line in lines) == 1
        score = f"Trial {trial.number}: combined_score {trial.value:.4f} ({directory}/trials/"
        assert sum(line.startswith(score) for line in lines) == 1
    assert not any(line.startswith(("Metrics:", "Epoch ", "Parameters:")) for line in lines)
    assert "Training |" not in result.stdout + result.stderr
    assert "Epoch 0" in (directory / "trials/0/out.log").read_text()
    last = lines.index(f"Train it on the whole training data: {command}")
    assert lines[last - 1].startswith(
        f"Best of 3 trials (0 pruned): trial {best.number}, combined_score"
    )
    # Run again with as many trials: nothing trains, the same best.
    (again,) = forked_allennlp([*arguments, "-o", ONE_EPOCH], as_program=True)
    assert again.returncode == 0
    assert again.stderr.strip().splitlines()[-2:] == lines[last - 1 : last + 1]
    assert len(trials_of(directory)) == 3


def test_a_killed_study_goes_on_from_its_storage_and_the_trials_checkpoint(tmp_path, tiny_bert):
    import tests.training.callbacks.sigkill  # noqa: F401  (registered in the forked command)

    # SIGKILL at the second epoch's first batch, once (its marker, outside the trials).
    kill = {"type": "test_sigkill", "epoch": 1, "batch": 1, "marker": str(tmp_path / "killed")}
    overrides = json.dumps({"trainer.num_epochs": 2, "data_loader.batch_size": 4})
    config = tmp_path / "killed.jsonnet"
    config.write_text(f"(import '{MRPC}') + {{trainer+: {{callbacks+: [{json.dumps(kill)}]}}}}")
    directory = tmp_path / "tune"
    command = ["tft-tune", str(config), "-s", str(directory), "--trials", "2", "-o", overrides]
    command += ["--seed", "0"]
    (killed,) = forked_allennlp(command)
    assert killed.returncode == -9
    (first,) = trials_of(directory)
    assert first.state.name == "RUNNING"
    (resumed,) = forked_allennlp(command)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    trials = trials_of(directory)
    assert [trial.state.name for trial in trials] == ["FAIL", "COMPLETE", "COMPLETE"]
    # Trial 1 trained trial 0's values on from trial 0's checkpoint, in its directory.
    assert trials[1].params == first.params
    assert (
        trials[1].user_attrs[RESUMES]
        == trials[1].user_attrs[DIRECTORY]
        == str(directory / "trials/0")
    )
    log = (directory / "trials/0/out.log").read_text()
    assert "Resuming" in log or "Recovering" in log
    assert (directory / "trials/0/metrics.json").exists()
    assert trials[2].user_attrs[DIRECTORY] == str(directory / "trials/2")
    # The sampler went on past the study's trials: the same --seed drew a new value.
    assert trials[2].params != trials[0].params


def test_two_processes_share_one_study_through_a_journal_file(tmp_path, tiny_bert):
    journal = f"journal:{tmp_path}/study.journal"
    commands = [
        ["tft-tune", MRPC, "-s", str(tmp_path / name), "--trials", "4", "--storage", journal]
        + ["--seed", str(seed), "-o", ONE_EPOCH]
        for seed, name in enumerate(("first", "second"))
    ]
    results = forked_allennlp(*commands, together=True)
    assert [result.returncode for result in results] == [0, 0], results[0].stderr[-2000:]
    trials = trials_of(tmp_path, journal)
    # Each process stops once the study holds 4 finished trials; one may be finishing its own
    # then.
    assert 4 <= len(trials) <= 5
    assert all(trial.state.name == "COMPLETE" for trial in trials)
    directories = [trial.user_attrs[DIRECTORY] for trial in trials]
    assert len(set(directories)) == len(trials)
    assert {directory.split("/")[-3] for directory in directories} == {"first", "second"}


def test_a_trial_worse_than_the_median_at_its_epoch_is_pruned(tmp_path):
    study = optuna.create_study(
        direction="maximize", pruner=optuna.pruners.MedianPruner(n_startup_trials=3)
    )
    for value in (0.8, 0.9, 0.7):
        study.add_trial(
            optuna.trial.create_trial(
                params={}, distributions={}, value=value, intermediate_values={0: value}
            )
        )
    trainer = types.SimpleNamespace(_metric_tracker=MetricTracker("+combined_score"))
    kept, pruned = study.ask(), study.ask()
    with training_trial(kept):
        OptunaPruning(str(tmp_path)).on_epoch(trainer, {"validation_combined_score": 0.85}, 0)
    assert kept.storage.get_trial(kept._trial_id).intermediate_values == {0: 0.85}
    with training_trial(pruned):
        callback = OptunaPruning(str(tmp_path))
    with pytest.raises(optuna.TrialPruned, match="after epoch 0"):
        callback.on_epoch(trainer, {"validation_combined_score": 0.75}, 0)
    with pytest.raises(ConfigurationError, match="there is none outside it"):
        OptunaPruning(str(tmp_path))


def test_a_distributed_config_is_refused_in_one_line_that_says_how_to_tune_it(tmp_path):
    config = tmp_path / "distributed.jsonnet"
    config.write_text(f"(import '{MRPC}') + {{distributed: {{cuda_devices: [-1, -1]}}}}")
    arguments = ["tft-tune", str(config), "-s", str(tmp_path / "study"), "--trials", "1"]
    (result,) = forked_allennlp(arguments, as_program=True)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"tft-tune: {config}: tft-tune trains each trial in one process, not distributed; tune "
        """without it (-o '{"distributed": null}'), then train the best trial distributed"""
    )
    assert not (tmp_path / "study/trials").exists()
    # As the line says: without it, the study runs.
    without = json.dumps({"distributed": None, "trainer.num_epochs": 1})
    (tuned,) = forked_allennlp([*arguments, "-o", without], as_program=True)
    assert tuned.returncode == 0, tuned.stderr[-3000:]
    assert [trial.state.name for trial in trials_of(tmp_path / "study")] == ["COMPLETE"]


@pytest.mark.parametrize(
    "tuning, error",
    [
        ({"space": {"trainer.optimizer.lr": {"low": 1e-3, "high": 1e-4}}}, "low <= high"),
        ({"space": {"trainer.optimizer.lr": {"low": 0, "high": 1, "log": True}}}, "low > 0"),
        ({"space": {"trainer.optimiser.lr": {"low": 1, "high": 2}}}, "no trainer.optimiser"),
        ({"space": {"data_loader.batch_size": {"choices": []}}}, "non-empty list"),
        ({"held_out_fraction": 1.0}, "between 0 and 1"),
        ({"spaces": {}}, "tuning.spaces is not a key"),
    ],
)
def test_a_wrong_search_space_is_one_line(tuning, error):
    config = {"trainer": {"optimizer": {"lr": 3e-5}}, "data_loader": {}, "tuning": tuning}
    with pytest.raises(ConfigurationError, match=error):
        SearchSpace(config, "c.jsonnet")


def test_a_declared_space_is_sampled_as_declared_and_left_out_of_training():
    config = {
        "trainer": {"optimizer": {"lr": 3e-5}, "num_epochs": 4},
        "data_loader": {"batch_size": 32},
        "dataset_reader": {"type": "tft_glue", "task": "mrpc"},
        "train_data_path": "train.tsv",
        "validation_data_path": "dev.tsv",
        "test_data_path": "test.tsv",
        "evaluate_on_test": True,
        "tuning": {
            "space": {
                "trainer.num_epochs": {"low": 2, "high": 3},
                "data_loader.batch_size": {"choices": [16]},
                "trainer.optimizer.lr": {"low": 1e-5, "high": 1e-5},
            },
            "held_out_fraction": 0.2,
        },
    }
    space = SearchSpace(config)
    assert "tuning" not in config
    trial = optuna.create_study().ask()
    values = space.sample(trial)
    assert values["data_loader.batch_size"] == 16 and values["trainer.optimizer.lr"] == 1e-5
    assert values["trainer.num_epochs"] in (2, 3) and isinstance(values["trainer.num_epochs"], int)
    trained = trial_config(config, values, space.held_out_fraction, "c")
    assert trained["trainer"]["num_epochs"] == values["trainer.num_epochs"]
    assert trained["data_loader"]["batch_size"] == 16
    assert "test_data_path" not in trained and "evaluate_on_test" not in trained
    assert trained["validation_data_path"] == "train.tsv"
    assert trained["dataset_reader"]["held_out_fraction"] == 0.2
    assert config["dataset_reader"] == {"type": "tft_glue", "task": "mrpc"}  # unchanged
    other = {**config, "dataset_reader": {"type": "tft_siamese"}}
    with pytest.raises(ConfigurationError, match="this config's dataset_reader is 'tft_siamese'"):
        trial_config(other, values, 0.1, "c")
