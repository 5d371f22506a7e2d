"""
The `mlflow` callback, against a real local MLflow store (SQLite, MLflow's own default), read back
with MLflow's own client.
"""

import json
import tarfile

import pytest
from mlflow import MlflowClient

from tests import CONFIGS_ROOT
from tests.allennlp_cli import forked_allennlp
from tft_allennlp.training.callbacks.mlflow import (
    MAX_PARAMETER_LENGTH,
    MLFLOW_RUN,
    MlflowCallback,
    config_parameters,
    store_uri,
)

MRPC = str(CONFIGS_ROOT / "glue/mrpc.jsonnet")


def tracked_config(directory, tiny_bert, extra_callbacks=(), top_level="", **mlflow):
    """
    The shipped MRPC config on the tiny BERT, 2 epochs of 3 batches, with the `mlflow` callback
    added (and `extra_callbacks` after it, and the jsonnet fields `top_level`).
    """
    path = directory / "tracked.jsonnet"
    callbacks = json.dumps([{"type": "mlflow", **mlflow}, *extra_callbacks])
    path.write_text(
        f"(import '{MRPC}') + {{trainer+: {{num_epochs: 2, callbacks+: {callbacks}}}, "
        f"data_loader+: {{batch_size: 4}}, {top_level}}}"
    )
    return str(path)


def mlflow_run(run_directory):
    """The client of the store `mlflow_run.json` names, and the MLflow run."""
    record = json.loads((run_directory / MLFLOW_RUN).read_text())
    client = MlflowClient(record["tracking_uri"])
    return client, client.get_run(record["run_id"])


def test_a_run_is_tracked_with_its_config_epochs_final_metrics_and_archive(tmp_path, tiny_bert):
    store = f"sqlite:///{tmp_path}/store/mlflow.db"
    (tmp_path / "store").mkdir()
    config = tracked_config(tmp_path, tiny_bert, experiment_name="mrpc", tags={"size": "8"})
    run = tmp_path / "run"
    # The store named as MLflow's users name it, by MLFLOW_TRACKING_URI.
    (result,) = forked_allennlp(
        ["train", config, "-s", str(run)], environments=[{"MLFLOW_TRACKING_URI": store}]
    )
    assert result.returncode == 0, result.stderr[-3000:]
    client, tracked = mlflow_run(run)
    assert tracked.info.status == "FINISHED"
    assert client.get_experiment(tracked.info.experiment_id).name == "mrpc"
    assert tracked.info.run_name == "run"
    assert tracked.data.tags["size"] == "8"
    assert tracked.data.tags["allennlp.serialization_dir"] == str(run)

    # The parameters: config.json, flattened.
    written = json.loads((run / "config.json").read_text())
    parameters = tracked.data.params
    assert parameters["trainer.optimizer.lr"] == str(written["trainer"]["optimizer"]["lr"])
    assert parameters["trainer.num_epochs"] == "2"
    assert parameters["trainer.callbacks.4.type"] == "mlflow"
    assert parameters["model.type"] == written["model"]["type"]

    # Each epoch's metrics at its step, as metrics_epoch_N.json has them.
    for key in ("validation_accuracy", "validation_loss", "training_loss"):
        history = client.get_metric_history(tracked.info.run_id, key)
        epochs = [json.loads((run / f"metrics_epoch_{n}.json").read_text()) for n in (0, 1)]
        assert [(point.step, point.value) for point in history] == [
            (n, pytest.approx(epochs[n][key])) for n in (0, 1)
        ]
    # The final metrics: metrics.json's other than the last epoch's.
    final = json.loads((run / "metrics.json").read_text())
    metrics = tracked.data.metrics
    assert metrics["best_validation_accuracy"] == pytest.approx(final["best_validation_accuracy"])
    assert metrics["best_epoch"] == final["best_epoch"]
    assert "training_duration" not in metrics  # a "0:00:01" string
    # The loss of every 100th batch: none in runs of two batches an epoch.
    assert "batch_loss" not in metrics

    artifacts = {artifact.path for artifact in client.list_artifacts(tracked.info.run_id)}
    assert artifacts == {"config.json", "metrics.json", "model.tar.gz", "out.log"}
    # A new experiment of a SQLite store keeps its artifacts beside the database.
    assert tracked.info.artifact_uri.startswith(f"{tmp_path}/store/mlruns/mrpc/")
    archive = client.download_artifacts(tracked.info.run_id, "model.tar.gz", str(tmp_path))
    assert open(archive, "rb").read() == (run / "model.tar.gz").read_bytes()
    with tarfile.open(archive) as opened:
        assert "weights.th" in opened.getnames()


def test_a_stopped_run_is_killed_and_its_recovery_goes_on_in_the_same_mlflow_run(
    tmp_path, tiny_bert
):
    import tests.training.callbacks.sigkill  # noqa: F401  (registered in the forked command)

    store = f"sqlite:///{tmp_path}/mlflow.db"
    # A SIGTERM at the second epoch's first batch: the run stops there with a checkpoint.
    stop = {"type": "test_sigkill", "epoch": 1, "batch": 1, "signal": "SIGTERM"}
    config = tracked_config(
        tmp_path, tiny_bert, [stop], tracking_uri=store, experiment_name="s", batch_interval=1
    )
    run = tmp_path / "run"
    (stopped,) = forked_allennlp(["train", config, "-s", str(run)])
    assert stopped.returncode == 128 + 15, stopped.stderr[-3000:]
    client, tracked = mlflow_run(run)
    assert tracked.info.status == "KILLED"
    history = client.get_metric_history(tracked.info.run_id, "validation_accuracy")
    assert [point.step for point in history] == [0]

    (recovered,) = forked_allennlp(["train", config, "-s", str(run), "--recover"])
    assert recovered.returncode == 0, recovered.stderr[-3000:]
    client, again = mlflow_run(run)
    assert again.info.run_id == tracked.info.run_id
    assert again.info.status == "FINISHED"
    assert len(client.search_runs([again.info.experiment_id])) == 1
    history = client.get_metric_history(tracked.info.run_id, "validation_accuracy")
    assert [point.step for point in history] == [0, 1]
    # The loss of every batch (batch_interval 1; 3 batches an epoch), each at the number of
    # batches trained by then, once: the stop came after the 4th, the recovery trained 5 and 6.
    losses = client.get_metric_history(tracked.info.run_id, "batch_loss")
    assert sorted(point.step for point in losses) == [1, 2, 3, 4, 5, 6]


def test_two_gloo_workers_make_one_mlflow_run_that_the_launcher_ends(tmp_path, tiny_bert):
    """
    Distributed training: the primary worker starts the run and logs the epochs (AllenNLP's
    metrics, gathered over both workers); the launching process, after the archive, logs the
    final metrics and the artifacts and ends it. The other worker logs nothing.
    """
    store = f"sqlite:///{tmp_path}/mlflow.db"
    config = tracked_config(
        tmp_path,
        tiny_bert,
        top_level="distributed: {cuda_devices: [-1, -1]}",
        tracking_uri=store,
        experiment_name="ddp",
        batch_interval=1,
    )
    run = tmp_path / "run"
    (result,) = forked_allennlp(["train", config, "-s", str(run)])
    assert result.returncode == 0, result.stderr[-3000:]
    client, tracked = mlflow_run(run)
    assert tracked.info.status == "FINISHED"
    assert len(client.search_runs([tracked.info.experiment_id])) == 1
    history = client.get_metric_history(tracked.info.run_id, "validation_accuracy")
    epochs = [json.loads((run / f"metrics_epoch_{n}.json").read_text()) for n in (0, 1)]
    assert [(point.step, point.value) for point in history] == [
        (n, pytest.approx(epochs[n]["validation_accuracy"])) for n in (0, 1)
    ]
    # The primary worker's batches, each once: it reads 5 of the 10 training pairs, 2 batches
    # an epoch.
    losses = client.get_metric_history(tracked.info.run_id, "batch_loss")
    assert sorted(point.step for point in losses) == [1, 2, 3, 4]
    final = json.loads((run / "metrics.json").read_text())
    assert tracked.data.metrics["best_validation_accuracy"] == pytest.approx(
        final["best_validation_accuracy"]
    )
    artifacts = {artifact.path for artifact in client.list_artifacts(tracked.info.run_id)}
    assert artifacts == {"config.json", "metrics.json", "model.tar.gz", "out.log"}


def test_the_config_is_flattened_to_parameters_and_a_value_too_long_is_named():
    config = {
        "model": {"type": "m", "dropout": 0.1, "layers": [1, 2]},
        "trainer": {"callbacks": [{"type": "a"}, "b"], "empty": {}},
        "long": "x" * (MAX_PARAMETER_LENGTH + 1),
        "flag": True,
        "none": None,
    }
    parameters, left_out = config_parameters(config)
    assert parameters == {
        "model.type": "m",
        "model.dropout": "0.1",
        "model.layers": "[1, 2]",
        "trainer.callbacks.0.type": "a",
        "trainer.callbacks.1": "b",
        "trainer.empty": "{}",
        "flag": "true",
        "none": "null",
    }
    assert left_out == [("long", MAX_PARAMETER_LENGTH + 1)]


def test_the_store_is_mlflows_default_in_the_working_directory_unless_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert store_uri(None) == f"sqlite:///{tmp_path}/mlflow.db"
    assert store_uri("sqlite:///runs/m.db") == f"sqlite:///{tmp_path}/runs/m.db"
    assert store_uri("sqlite:////abs/m.db") == "sqlite:////abs/m.db"
    assert store_uri("http://tracking:5000") == "http://tracking:5000"
    assert store_uri("databricks") == "databricks"
    assert store_uri("folder") == str(tmp_path / "folder")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://elsewhere:5000")
    assert store_uri(None) == "http://elsewhere:5000"
    assert store_uri("sqlite:////abs/m.db") == "sqlite:////abs/m.db"
    with pytest.raises(Exception, match="batch_interval must be 0 or more, not -1"):
        MlflowCallback(str(tmp_path), batch_interval=-1)
