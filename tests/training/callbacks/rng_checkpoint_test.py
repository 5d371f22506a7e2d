import io
import json
import os
import tarfile

import pytest
import torch
from allennlp.common import Params
from allennlp.training.callbacks import TrainerCallback

from tests import CONFIGS_ROOT
from tests.allennlp_cli import allennlp_train, write_config


def build(tmp_path):
    return TrainerCallback.from_params(
        Params({"type": "tft_rng_checkpoint"}), serialization_dir=str(tmp_path)
    )


def test_restores_the_generator_through_a_weights_only_load(tmp_path):
    torch.manual_seed(7)
    callback = build(tmp_path)
    buffer = io.BytesIO()
    torch.save({"callbacks": [callback.state_dict()]}, buffer)
    expected = torch.rand(5)
    torch.manual_seed(8)
    buffer.seek(0)
    state = torch.load(buffer, weights_only=True)
    build(tmp_path).load_state_dict(state["callbacks"][0])
    assert torch.equal(torch.rand(5), expected)


# Small batches so that an epoch has several batches to be killed in the middle of; a
# checkpoint after every batch, as a user would set with `save_every_num_seconds` on a long epoch.
RUNS = {
    "glue": (
        CONFIGS_ROOT / "glue/mrpc.jsonnet",
        {"data_loader.batch_size": 3, "trainer.num_epochs": 3},
    ),
    "injection": (
        CONFIGS_ROOT / "injection/tft.jsonnet",
        {
            "data_loader.batch_size": 4,
            "trainer.num_epochs": 3,
            "dataset_reader.validation_fraction": 0.25,
            "validation_dataset_reader.validation_fraction": 0.25,
        },
    ),
}
# Metrics that differ between any two runs.
UNREPRODUCIBLE = ("training_duration", "memory_MB")


def write_run_config(path, config, overrides, kill=None, stop_after_decreases=None):
    overrides = {**overrides, "trainer.checkpointer.save_every_num_batches": 1}

    def edit(params):
        if kill is not None:
            params["trainer"]["callbacks"].append({"type": "test_sigkill", **kill})
        for callback in params["trainer"]["callbacks"]:
            if callback["type"] == "tft_stop_after_decreases" and stop_after_decreases is not None:
                callback["decreases"] = stop_after_decreases

    return write_config(path, config, overrides, edit)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """Each run of RUNS, uninterrupted, trained on first use."""
    directory = tmp_path_factory.mktemp("uninterrupted")
    done = {}

    def run(name):
        if name not in done:
            config, overrides = RUNS[name]
            plain = allennlp_train(
                write_run_config(directory / f"{name}.json", config, overrides), directory / name
            )
            assert plain.returncode == 0, plain.stderr[-3000:]
            done[name] = directory / name
        return done[name]

    return run


def kill_and_recover(tmp_path, config, overrides, kill, **changes):
    """Trains until `kill` stops the run with SIGKILL, then recovers; the serialization dir."""
    killed_config = write_run_config(tmp_path / "killed.json", config, overrides, kill, **changes)
    killed = allennlp_train(killed_config, tmp_path / "killed")
    assert killed.returncode == -9, killed.stderr[-3000:]
    recovered = allennlp_train(killed_config, tmp_path / "killed", "--recover")
    assert recovered.returncode == 0, recovered.stderr[-3000:]
    return tmp_path / "killed", recovered


def assert_same_run(expected_dir, resumed_dir):
    """The same metrics.json (but timings) and the same weights, bit for bit."""
    expected = json.loads((expected_dir / "metrics.json").read_text())
    resumed = json.loads((resumed_dir / "metrics.json").read_text())
    assert "validation_accuracy" in expected or "validation_phrase_accuracy" in expected
    assert "training_loss" in expected and "best_epoch" in expected
    keep = [key for key in expected if not any(part in key for part in UNREPRODUCIBLE)]
    assert {key: resumed.get(key) for key in keep} == {key: expected[key] for key in keep}
    # CPU kernels are deterministic; loaded without unpickling code.
    expected_weights = torch.load(expected_dir / "best.th", weights_only=True)
    resumed_weights = torch.load(resumed_dir / "best.th", weights_only=True)
    assert expected_weights.keys() == resumed_weights.keys()
    for name, tensor in expected_weights.items():
        assert torch.equal(resumed_weights[name], tensor), name
    with tarfile.open(resumed_dir / "model.tar.gz") as archive:
        assert {"config.json", "weights.th"} <= set(archive.getnames())


@pytest.mark.parametrize("run", sorted(RUNS))
def test_sigkill_mid_epoch_then_recover_ends_like_an_uninterrupted_run(
    run, tmp_path, uninterrupted
):
    # Killed in the middle of the second epoch, after its first checkpoint of that epoch.
    killed, _ = kill_and_recover(tmp_path, *RUNS[run], {"at": "batch", "epoch": 1, "batch": 2})
    assert_same_run(uninterrupted(run), killed)


@pytest.mark.parametrize("state", ["model_state", "training_state"])
def test_sigkill_while_writing_a_checkpoint_then_recover(state, tmp_path, uninterrupted):
    # Half of the second epoch's second checkpoint file is on disk when the process dies.
    killed, recovered = kill_and_recover(
        tmp_path, *RUNS["glue"], {"at": state, "epoch": 1, "batch": 2}
    )
    assert_same_run(uninterrupted("glue"), killed)
    assert not [name for name in os.listdir(killed) if name.startswith(".tft-partial-")]


def test_sigkill_while_archiving_then_recover_keeps_every_metric(tmp_path, uninterrupted):
    killed, _ = kill_and_recover(tmp_path, *RUNS["glue"], {"at": "archive"})
    assert_same_run(uninterrupted("glue"), killed)


# Runs that stop early, by AllenNLP's patience (no learning, so no improvement after epoch 0)
# or by the paper's rule (set to stop at the first validation), and the epochs they train.
EARLY_STOPS = {
    "patience": ("glue", {"trainer.patience": 1, "trainer.optimizer.lr": 0.0}, None, 2),
    "decreases": ("injection", {}, 0, 1),
}


def stopped_early(rule, tmp_path):
    """The run of `EARLY_STOPS[rule]`, trained in `tmp_path/plain`: its config, overrides,
    `decreases` setting and the epochs it trains."""
    run, changes, decreases, epochs = EARLY_STOPS[rule]
    config, overrides = RUNS[run]
    overrides = {**overrides, **changes, "trainer.num_epochs": 4}
    plain_config = write_run_config(tmp_path / "plain.json", config, overrides, None, decreases)
    assert allennlp_train(plain_config, tmp_path / "plain").returncode == 0
    return config, overrides, decreases, epochs


@pytest.mark.parametrize("rule", sorted(EARLY_STOPS))
def test_a_run_that_stopped_early_stays_stopped_after_recovery(rule, tmp_path):
    config, overrides, decreases, epochs = stopped_early(rule, tmp_path)
    killed, _ = kill_and_recover(
        tmp_path, config, overrides, {"at": "archive"}, stop_after_decreases=decreases
    )
    assert_same_run(tmp_path / "plain", killed)
    for directory in (tmp_path / "plain", killed):
        trained = sorted(name for name in os.listdir(directory) if name.startswith("metrics_"))
        assert trained == [f"metrics_epoch_{epoch}.json" for epoch in range(epochs)]


@pytest.mark.parametrize("rule", sorted(EARLY_STOPS))
def test_a_stop_signal_in_the_validation_that_stops_early_lets_the_run_finish(rule, tmp_path):
    config, overrides, decreases, epochs = stopped_early(rule, tmp_path)
    # A SIGTERM in the last epoch's validation: nothing is left to train, so the run ends as
    # it would have (a stop would leave a checkpoint that `--recover` only archives).
    signal = {"at": "validation", "epoch": epochs - 1, "batch": 1, "signal": "SIGTERM"}
    signalled_config = write_run_config(
        tmp_path / "signalled.json", config, overrides, signal, decreases
    )
    finished = allennlp_train(signalled_config, tmp_path / "signalled")
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert_same_run(tmp_path / "plain", tmp_path / "signalled")


def test_a_damaged_checkpoint_is_named_and_skipped(tmp_path):
    config, overrides = RUNS["glue"]
    # Both checkpoints kept (the configs keep the latest only), so one can be damaged.
    keep_two = {"trainer.checkpointer.keep_most_recent_by_count": 2}
    run_config = write_run_config(
        tmp_path / "run.json", config, {**overrides, **keep_two, "trainer.num_epochs": 1}
    )
    directory = tmp_path / "run"
    assert allennlp_train(run_config, directory).returncode == 0
    checkpoints = sorted(name for name in os.listdir(directory) if name.startswith("model_state"))
    assert checkpoints == ["model_state_e0_b4.th", "model_state_e1_b0.th"]
    newest = directory / "training_state_e1_b0.th"
    newest.write_bytes(newest.read_bytes()[:100])  # as AllenNLP's own checkpointer leaves it
    (directory / "model.tar.gz").unlink()
    recovered = allennlp_train(run_config, directory, "--recover")
    assert recovered.returncode == 0, recovered.stderr[-3000:]
    log = (directory / "out.log").read_text()
    assert f"Skipped damaged checkpoint files {newest} (RuntimeError: " in log
    assert (directory / "training_state_e1_b0.th.damaged").exists()
    for name in ("model_state_e0_b4.th", "training_state_e0_b4.th"):
        (directory / name).write_bytes(b"")
    for name in ("model_state_e1_b0.th", "training_state_e1_b0.th"):
        (directory / name).unlink()
    (directory / "model.tar.gz").unlink()
    failed = allennlp_train(run_config, directory, "--recover")
    assert failed.returncode != 0
    assert f"can be loaded; damaged: {directory / 'model_state_e0_b4.th'}" in failed.stderr


def test_a_stop_signal_while_archiving_lets_the_run_finish(tmp_path, uninterrupted):
    config = write_run_config(
        tmp_path / "c.json", *RUNS["glue"], {"at": "archive", "signal": "SIGTERM"}
    )
    # The signal is held while `model.tar.gz` is written: the run ends as it would have.
    finished = allennlp_train(config, tmp_path / "run")
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert_same_run(uninterrupted("glue"), tmp_path / "run")
