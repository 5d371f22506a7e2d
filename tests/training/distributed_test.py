"""
Distributed training on the CPU (two gloo workers, `"cuda_devices": [-1, -1]`) against a
single-process run of the same config. Each step is one batch of the whole training set, split
between the workers by the readers' sharding, and dropout is off, so both runs take the same
gradient steps, up to summation order. (The injection model's phrasal loss is averaged over all
workers' phrase pairs for this to hold.)
"""
import json

import pytest
import torch

from tests import CONFIGS_ROOT
from tests.allennlp_cli import allennlp_train, write_config

NO_DROPOUT = {"add_pooling_layer": False, "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}
COMMON = {
    "model.dropout": 0.0,
    "model.text_field_embedder.token_embedders.tokens.transformer_kwargs": NO_DROPOUT,
    "data_loader.shuffle": False,
    "trainer.num_epochs": 3,
    # Large enough for the loss to move visibly in three steps.
    "trainer.optimizer.lr": 1e-3,
}
# config, overrides, batch size of the single process (the whole training set: MRPC's fixture
# has 10 rows; the aligned fixture's 12 lines give 24 instances, read in two blocks of 6 lines,
# one per worker).
RUNS = {
    "glue": (CONFIGS_ROOT / "glue/mrpc.jsonnet", {}, 10),
    "injection": (
        CONFIGS_ROOT / "injection/tft.jsonnet",
        {
            "dataset_reader.part": "all",
            "validation_dataset_reader.part": "all",
            "dataset_reader.buffer_size": 6,
            "validation_dataset_reader.buffer_size": 6,
        },
        24,
    ),
}


def epoch_metrics(directory, epochs=3):
    return [json.loads((directory / f"metrics_epoch_{epoch}.json").read_text()) for epoch in range(epochs)]


@pytest.mark.parametrize("run", sorted(RUNS))
def test_two_gloo_workers_train_like_one_process(run, tmp_path):
    config, overrides, batch_size = RUNS[run]
    single_overrides = {**COMMON, **overrides, "data_loader.batch_size": batch_size}
    single = write_config(tmp_path / "single.json", config, single_overrides)
    distributed = write_config(
        tmp_path / "distributed.json",
        config,
        {
            **single_overrides,
            "data_loader.batch_size": batch_size // 2,
            "distributed": {"cuda_devices": [-1, -1]},
        },
    )
    for name, path in (("single", single), ("distributed", distributed)):
        result = allennlp_train(path, tmp_path / name)
        assert result.returncode == 0, result.stderr[-3000:]

    expected = epoch_metrics(tmp_path / "single")
    actual = epoch_metrics(tmp_path / "distributed")
    losses = [metrics["training_loss"] for metrics in expected]
    # The runs are worth comparing only if training changes the loss.
    assert abs(losses[2] - losses[0]) > 0.01 * losses[0]
    for single_metrics, distributed_metrics in zip(expected, actual):
        assert distributed_metrics["training_loss"] == pytest.approx(
            single_metrics["training_loss"], rel=1e-5
        )
        validation = [key for key in single_metrics if key.startswith("validation_") and key != "validation_loss"]
        assert validation
        for key in validation:
            assert distributed_metrics[key] == pytest.approx(single_metrics[key], abs=1e-5), key
    single_weights = torch.load(tmp_path / "single/best.th", weights_only=True)
    distributed_weights = torch.load(tmp_path / "distributed/best.th", weights_only=True)
    for name, tensor in single_weights.items():
        assert torch.allclose(distributed_weights[name], tensor, atol=1e-6), name
