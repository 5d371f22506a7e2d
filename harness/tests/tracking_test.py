"""
`--mlflow` (`tracking.py`): each finished run of a grid logged to MLflow, read back with its client.
"""

import json

import pytest

from tests.allennlp_cli import forked_allennlp, forked_experiment_runs
from tiny_grids import cli_spec


def test_each_run_a_grid_finishes_is_logged_to_mlflow_without_changing_what_it_trains(
    tmp_path, tiny_bert
):
    from mlflow import MlflowClient

    path = cli_spec(tmp_path, tiny_bert, seeds=[1, 2])
    store = f"sqlite:///{tmp_path}/mlflow.db"
    with forked_experiment_runs():
        (result,) = forked_allennlp(["tft-experiment", path, "--mlflow", store])
    assert result.returncode == 0, result.stderr[-3000:]
    client = MlflowClient(store)
    experiment = client.get_experiment_by_name("spec")  # the spec file's name
    runs = client.search_runs([experiment.experiment_id], order_by=["tags.seed"])
    assert [run.data.tags["seed"] for run in runs] == ["1", "2"]
    for seed, logged in zip((1, 2), runs):
        relative = f"glue/tiny/none/paper/mrpc/n8/seed{seed}"
        directory = tmp_path / "grid" / relative
        assert logged.info.status == "FINISHED"
        assert logged.info.run_name == relative
        tags = logged.data.tags
        assert (tags["task"], tags["variant"], tags["train_size"], tags["base"]) == (
            "mrpc",
            "none",
            "8",
            "tiny",
        )
        assert (tags["strategy"], tags["recipe"], tags["run"]) == ("cross", "paper", relative)
        config = json.loads((directory / "config.json").read_text())
        assert "mlflow" not in json.dumps(config)  # tracking trains nothing otherwise
        assert logged.data.params["random_seed"] == str(seed)
        assert logged.data.params["trainer.num_epochs"] == "1"
        epoch = json.loads((directory / "metrics_epoch_0.json").read_text())
        history = client.get_metric_history(logged.info.run_id, "validation_accuracy")
        assert [(point.step, point.value) for point in history] == [
            (0, pytest.approx(epoch["validation_accuracy"]))
        ]
        final = json.loads((directory / "metrics.json").read_text())
        assert logged.data.metrics["best_validation_f1"] == pytest.approx(
            final["best_validation_f1"]
        )
        artifacts = {item.path for item in client.list_artifacts(logged.info.run_id)}
        assert artifacts == {"config.json", "metrics.json", "train.log"}
