"""
Multi-node training as `docs/distributed.md` describes it, on this machine: two `allennlp train`
processes of `training_configs/distributed/tft.jsonnet`, `--node-rank 0` and `--node-rank 1`,
each a "node" of one gloo worker (`TFT_CUDA_DEVICES=-1`, float32), meeting at the primary's
address and port on localhost. They must take the same steps as one process with the whole
batch, as `distributed_test.py` checks for two workers of one node.
"""

import json

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common import cached_transformers
from allennlp.common.util import find_open_port

from tests import CONFIGS_ROOT
from tests.allennlp_cli import forked_allennlp, write_config
from tests.training.distributed_test import COMMON, RUNS, epoch_metrics


def test_two_nodes_of_one_worker_train_like_one_process(tmp_path, monkeypatch):
    config, overrides, _ = RUNS["tft"]
    # The config's batch of 100 holds the whole training set (24 instances), as does each
    # node's half of it: every run takes one step per epoch.
    single_overrides = {**COMMON, **overrides}
    single = write_config(tmp_path / "single.json", config, single_overrides)
    assert json.loads(single.read_text())["data_loader"]["batch_size"] == 100
    # What a cluster script exports on every node; the port is free here, and the same for all.
    monkeypatch.setenv("TFT_CUDA_DEVICES", "-1")
    monkeypatch.setenv("TFT_NUM_NODES", "2")
    monkeypatch.setenv("TFT_PRIMARY_ADDRESS", "127.0.0.1")
    monkeypatch.setenv("TFT_PRIMARY_PORT", str(find_open_port()))
    nodes = write_config(
        tmp_path / "nodes.json",
        CONFIGS_ROOT / "distributed/tft.jsonnet",
        {**single_overrides, "trainer.precision": "float32"},
    )
    assert json.loads(nodes.read_text())["data_loader"]["batch_size"] == 50
    cached_transformers._clear_caches()
    train_model_from_file(str(single), str(tmp_path / "single"))
    # Each node writes its own serialization directory (as on node-local disks).
    results = forked_allennlp(
        *(
            ["train", str(nodes), "-s", str(tmp_path / f"node{rank}"), "--node-rank", str(rank)]
            for rank in (0, 1)
        )
    )
    for rank, result in enumerate(results):
        assert result.returncode == 0, (rank, result.stderr[-3000:])
    assert "Number of nodes: 2 | World size: 2" in (tmp_path / "node1/out.log").read_text()

    expected = epoch_metrics(tmp_path / "single")
    losses = [metrics["training_loss"] for metrics in expected]
    assert abs(losses[2] - losses[0]) > 0.005 * losses[0]
    for rank in (0, 1):
        for single_metrics, node_metrics in zip(expected, epoch_metrics(tmp_path / f"node{rank}")):
            # As in distributed_test.py: AllenNLP averages each worker's mean validation loss
            # (validation batches of unequal sizes), so only the metrics are compared.
            keys = ["training_loss"] + [
                key
                for key in single_metrics
                if key.startswith("validation_") and key != "validation_loss"
            ]
            for key in keys:
                assert node_metrics[key] == pytest.approx(single_metrics[key], rel=1e-5), key
    single_weights = torch.load(tmp_path / "single/best.th", weights_only=True)
    for rank in (0, 1):
        weights = torch.load(tmp_path / f"node{rank}/best.th", weights_only=True)
        for name, tensor in single_weights.items():
            assert torch.allclose(weights[name], tensor, atol=1e-6), (rank, name)
    # Each node's first worker writes a whole run (checkpoints, for `--recover` on every node,
    # and the archive): the nodes must not share one serialization directory.
    for rank in (0, 1):
        assert list((tmp_path / f"node{rank}").glob("model_state_e3_b0.th"))
        assert (tmp_path / f"node{rank}/model.tar.gz").exists()
