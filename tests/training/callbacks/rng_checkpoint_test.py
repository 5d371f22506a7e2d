import io
import json
import os

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


def write_run_config(path, config, overrides, kill_at=None):
    def edit(params):
        params["trainer"]["checkpointer"] = {"save_every_num_batches": 1}
        if kill_at is not None:
            kill = {"type": "test_sigkill", "epoch": kill_at[0], "batch": kill_at[1]}
            params["trainer"]["callbacks"].append(kill)

    return write_config(path, config, overrides, edit)


@pytest.mark.parametrize("run", sorted(RUNS))
def test_sigkill_mid_epoch_then_recover_ends_like_an_uninterrupted_run(run, tmp_path):
    config, overrides = RUNS[run]
    plain = allennlp_train(
        write_run_config(tmp_path / "plain.json", config, overrides), tmp_path / "plain"
    )
    assert plain.returncode == 0, plain.stderr[-3000:]

    # Killed in the middle of the second epoch, after its first checkpoint of that epoch.
    killed_config = write_run_config(tmp_path / "killed.json", config, overrides, kill_at=(1, 2))
    killed = allennlp_train(killed_config, tmp_path / "killed")
    assert killed.returncode == -9
    checkpoints = sorted(os.listdir(tmp_path / "killed"))
    assert "model_state_e1_b1.th" in checkpoints and "metrics.json" not in checkpoints
    recovered = allennlp_train(killed_config, tmp_path / "killed", "--recover")
    assert recovered.returncode == 0, recovered.stderr[-3000:]

    expected = json.loads((tmp_path / "plain/metrics.json").read_text())
    resumed = json.loads((tmp_path / "killed/metrics.json").read_text())
    validation = [key for key in expected if "validation_" in key or key == "best_epoch"]
    assert validation and {key: resumed[key] for key in validation} == {
        key: expected[key] for key in validation
    }
    # Same weights, bit for bit (CPU kernels are deterministic), loaded without unpickling code.
    expected_weights = torch.load(tmp_path / "plain/best.th", weights_only=True)
    resumed_weights = torch.load(tmp_path / "killed/best.th", weights_only=True)
    assert expected_weights.keys() == resumed_weights.keys()
    for name, tensor in expected_weights.items():
        assert torch.equal(resumed_weights[name], tensor), name
