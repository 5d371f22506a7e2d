"""
The `tft_mixed_precision` trainer on the CPU: which dtype each precision and card get, that the
distributed configs use it, that a CPU run in a precision the CPU lacks stops with one line
before training, that bfloat16 autocasts on the CPU, and that `"precision": "float32"` trains
exactly as AllenNLP's `gradient_descent`. Autocast on CUDA: benchmarks/gpu/ checks it on a GPU.
"""

import json
import os
import re
import subprocess
import sys
import types

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params, cached_transformers
from allennlp.common.checks import ConfigurationError

from tests import CONFIGS_ROOT
from tests.allennlp_cli import allennlp_train, forked_allennlp, write_config
from tft_allennlp.common.onednn_caches import VARIABLES, bound_onednn_caches
from tft_allennlp.training.trainers.mixed_precision import (
    MixedPrecisionTrainer,
    _GradScalerState,
    amp_dtype,
)

CUDA = torch.device("cuda", 0)


@pytest.mark.parametrize(
    "precision, capability, dtype",
    [
        ("auto", (9, 0), torch.bfloat16),  # H100, H200
        ("auto", (8, 0), torch.bfloat16),  # A100
        ("auto", (7, 0), torch.float16),  # V100: no bfloat16 tensor cores
        ("auto", (7, 5), torch.float16),  # T4
        ("bfloat16", (8, 6), torch.bfloat16),
        ("float16", (9, 0), torch.float16),
        ("float32", (9, 0), None),
    ],
)
def test_each_precision_and_card_get_their_dtype(precision, capability, dtype):
    assert amp_dtype(precision, CUDA, capability) == dtype


def test_a_cpu_takes_float32_and_bfloat16_and_refuses_the_rest_in_one_line():
    assert amp_dtype("float32", torch.device("cpu")) is None
    assert amp_dtype("bfloat16", torch.device("cpu")) == torch.bfloat16
    for precision in ("auto", "float16"):
        with pytest.raises(ConfigurationError, match="needs a CUDA device") as error:
            amp_dtype(precision, torch.device("cpu"))
        assert "\n" not in str(error.value)
    with pytest.raises(ConfigurationError, match="no bfloat16 tensor cores"):
        amp_dtype("bfloat16", CUDA, (7, 0))
    with pytest.raises(ConfigurationError, match="'fp16' is not one of auto, bfloat16, float16"):
        amp_dtype("fp16", CUDA, (9, 0))


@pytest.mark.parametrize("config", ["tft", "mrpc"])
def test_the_distributed_configs_train_in_automatic_mixed_precision(config):
    trainer = Params.from_file(str(CONFIGS_ROOT / f"distributed/{config}.jsonnet"))["trainer"]
    assert trainer["type"] == "tft_mixed_precision" and trainer["precision"] == "auto"
    assert "use_amp" not in trainer


def test_a_cpu_run_with_mixed_precision_stops_with_one_line_before_training(tmp_path):
    config = write_config(
        tmp_path / "config.json",
        CONFIGS_ROOT / "glue/mrpc.jsonnet",
        {"trainer.type": "tft_mixed_precision", "trainer.num_epochs": 1},
    )
    result = allennlp_train(config, tmp_path / "run")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "allennlp.common.checks.ConfigurationError: tft_mixed_precision: precision 'auto' needs "
        "a CUDA device, and this worker trains on cpu; "
        'set "trainer.precision" to "bfloat16" (mixed precision on the CPU) or "float32".'
    )
    assert not list((tmp_path / "run").glob("*.th"))


def test_bfloat16_on_the_cpu_autocasts_the_forward_passes(tmp_path, monkeypatch):
    # Two epochs in each precision from the same seed: bfloat16 rounds the matrix products'
    # inputs, so its weights differ from float32's, by little.
    weights, losses = {}, {}
    for variable in VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    for precision in ("float32", "bfloat16"):
        overrides = {"trainer.type": "tft_mixed_precision", "trainer.num_epochs": 2}
        overrides["trainer.precision"] = precision
        overrides["trainer.onednn_cache_capacity"] = 64
        cached_transformers._clear_caches()
        train_model_from_file(
            str(CONFIGS_ROOT / "glue/mrpc.jsonnet"),
            str(tmp_path / precision),
            json.dumps(overrides),
        )
        weights[precision] = torch.load(tmp_path / precision / "best.th", weights_only=True)
        metrics = json.loads((tmp_path / precision / "metrics.json").read_text())
        losses[precision] = metrics["training_loss"]
    largest = max(
        (weights["bfloat16"][name] - tensor).abs().max().item()
        for name, tensor in weights["float32"].items()
    )
    assert 0 < largest < 0.05
    assert losses["bfloat16"] == pytest.approx(losses["float32"], rel=0.05)
    # The bfloat16 run bounded oneDNN's caches (the float32 run, which does not use them, did
    # not: it came first).
    assert [os.environ.get(variable) for variable in VARIABLES] == ["64", "64"]


def test_the_cpu_memory_options_take_effect_before_the_first_step(tmp_path, monkeypatch):
    # In a child (both settings are the whole process's): bfloat16 on the CPU with the oneDNN
    # bound and freed memory kept, one epoch.
    for variable in VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    config = write_config(
        tmp_path / "config.json",
        CONFIGS_ROOT / "glue/mrpc.jsonnet",
        {
            "trainer.type": "tft_mixed_precision",
            "trainer.precision": "bfloat16",
            "trainer.onednn_cache_capacity": 32,
            "trainer.reuse_freed_memory": True,
            "trainer.num_epochs": 1,
        },
    )
    (result,) = forked_allennlp(["train", str(config), "-s", str(tmp_path / "run")])
    assert result.returncode == 0, result.stderr
    log = (tmp_path / "run/out.log").read_text()
    bounded = "oneDNN's kernel caches bounded: {'ONEDNN_PRIMITIVE_CACHE_CAPACITY': '32', "
    assert bounded + "'LRU_CACHE_CAPACITY': '32'}" in log
    assert "Freed memory kept for reuse: blocks up to 256 MB from the heap" in log
    # Both before training began.
    assert log.index("Freed memory kept") < log.index("Beginning training.")


def test_a_users_own_onednn_cache_sizes_stay(monkeypatch):
    monkeypatch.setenv("LRU_CACHE_CAPACITY", "512")
    monkeypatch.delenv("ONEDNN_PRIMITIVE_CACHE_CAPACITY", raising=False)
    assert bound_onednn_caches(16) == {"ONEDNN_PRIMITIVE_CACHE_CAPACITY": "16"}
    assert os.environ["LRU_CACHE_CAPACITY"] == "512"
    with pytest.raises(ConfigurationError, match="onednn_cache_capacity 0: at least 1 kernel"):
        bound_onednn_caches(0)


# A convolution on inputs of two sizes, 5 calls, and how oneDNN's log (its verbose mode) says it
# came by each convolution kernel: built anew (a miss), or taken from its cache (a hit). oneDNN
# runs float32 convolutions on every x86 CPU (a bfloat16 linear layer runs elsewhere on a CPU
# without bfloat16 instructions); each call also builds a few reorders of the data's layout,
# which share the cache.
KERNELS = """
import sys, torch
from tft_allennlp.common.onednn_caches import bound_onednn_caches
if sys.argv[1] != "default":
    bound_onednn_caches(int(sys.argv[1]))
weight = torch.ones(16, 16, 3, 3)
for size in (20, 28, 20, 28, 20):
    torch.nn.functional.conv2d(torch.ones(4, 16, size, size), weight)
"""


@pytest.mark.parametrize(
    "capacity, kernels",
    [
        ("default", ["miss", "miss", "hit", "hit", "hit"]),
        ("8", ["miss", "miss", "hit", "hit", "hit"]),
        # One kernel kept: each call's kernels evict the other size's.
        ("1", ["miss"] * 5),
    ],
)
def test_the_bound_reaches_onednn_when_set_before_its_first_kernel(capacity, kernels):
    environment = {key: value for key, value in os.environ.items() if key not in VARIABLES}
    result = subprocess.run(
        [sys.executable, "-c", KERNELS, capacity],
        env={**environment, "ONEDNN_VERBOSE": "all", "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    log = result.stdout + result.stderr
    assert re.findall(r"primitive,create:cache_(miss|hit),cpu,convolution", log) == kernels


def test_float32_trains_exactly_as_gradient_descent(tmp_path):
    weights = {}
    for trainer in ("gradient_descent", "tft_mixed_precision"):
        overrides = {"trainer.type": trainer, "trainer.num_epochs": 2}
        if trainer == "tft_mixed_precision":
            overrides["trainer.precision"] = "float32"
        cached_transformers._clear_caches()
        train_model_from_file(
            str(CONFIGS_ROOT / "glue/mrpc.jsonnet"), str(tmp_path / trainer), json.dumps(overrides)
        )
        weights[trainer] = torch.load(tmp_path / trainer / "best.th", weights_only=True)
    metrics = [
        json.loads((tmp_path / trainer / "metrics.json").read_text())
        for trainer in ("gradient_descent", "tft_mixed_precision")
    ]
    assert metrics[0]["training_loss"] == metrics[1]["training_loss"]
    assert metrics[0]["validation_accuracy"] == metrics[1]["validation_accuracy"]
    for name, tensor in weights["gradient_descent"].items():
        assert torch.equal(weights["tft_mixed_precision"][name], tensor), name


@pytest.mark.parametrize("scale", [10.0, 1e-3])
def test_gradients_are_clipped_as_clip_grad_norm_clips_them(scale):
    # Gradients far above the bound of 1 (clipped) and far below it (left as they are).
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(30, 20), torch.nn.Linear(20, 3))
    (model(torch.randn(8, 30)) * scale).sum().backward()
    expected = [p.grad.clone() for p in model.parameters()]
    norm = torch.nn.utils.clip_grad_norm_([p for p in model.parameters()], 1.0)
    clipped = [p.grad.clone() for p in model.parameters()]
    for parameter, gradient in zip(model.parameters(), expected):
        parameter.grad = gradient
    # The trainer's own state that rescale_gradients reads, without building a trainer.
    trainer = types.SimpleNamespace(
        _grad_norm=1.0, _scaler=None, _ddp_wrapped_model=None, model=model
    )
    assert MixedPrecisionTrainer.rescale_gradients(trainer) == norm.item()
    assert (norm.item() > 1.0) == (scale == 10.0)
    for parameter, gradient in zip(model.parameters(), clipped):
        assert torch.equal(parameter.grad, gradient)


def test_amp_settings_of_gradient_descent_are_refused(tmp_path):
    with pytest.raises(ConfigurationError, match="use_amp"):
        train_model_from_file(
            str(CONFIGS_ROOT / "glue/mrpc.jsonnet"),
            str(tmp_path / "run"),
            json.dumps({"trainer.type": "tft_mixed_precision", "trainer.use_amp": True}),
        )


def test_the_gradient_scalers_state_survives_a_weights_only_checkpoint(tmp_path):
    # What the trainer checkpoints for float16 (it needs CUDA; the state is the same on the CPU).
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=7)
    scaler.scale(torch.ones(1))  # the scale exists from the first scaled loss on
    scaler.update(new_scale=2.0**7)
    torch.save(
        {"callbacks": [_GradScalerState(str(tmp_path), scaler).state_dict()]}, tmp_path / "t"
    )
    state = torch.load(tmp_path / "t", weights_only=True)["callbacks"][0]
    restored = torch.amp.GradScaler("cpu")
    _GradScalerState(str(tmp_path), restored).load_state_dict(state)
    assert restored.get_scale() == 2.0**7 and restored.get_growth_interval() == 7
