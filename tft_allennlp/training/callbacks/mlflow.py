"""
Tracks a training run in MLflow: the config's parameters, the metrics of every epoch (and the
loss every few batches), the final metrics and the run's files.
"""

import json
import logging
import os
import time
import urllib.parse
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import TensorDict
from allennlp.training.callbacks.callback import TrainerCallback

from tft_allennlp.common.atomic_files import write_json_atomically

if TYPE_CHECKING:  # for annotations only
    from allennlp.training import GradientDescentTrainer
    from mlflow import MlflowClient

logger = logging.getLogger(__name__)

# Written to the serialization directory: the MLflow run this run is tracked in (a `--recover`
# goes on in the same MLflow run).
MLFLOW_RUN = "mlflow_run.json"
# The store where none is named, as MLflow's own default: a SQLite file in the working directory
# (and the artifacts in `mlruns/` beside it).
DEFAULT_STORE = "mlflow.db"
# The metrics of an epoch, among AllenNLP's metrics of a run.
EPOCH_PREFIXES = ("training_", "validation_")
# MLflow's own limits: a parameter's value, and the entries of one `log_batch` call.
MAX_PARAMETER_LENGTH = 6000
PARAMETERS_PER_BATCH = 100
METRICS_PER_BATCH = 1000


@TrainerCallback.register("mlflow")
class MlflowCallback(TrainerCallback):
    """
    Tracks the run in MLflow, in a local store (`mlruns/` in the working directory) unless
    `tracking_uri` or MLflow's `MLFLOW_TRACKING_URI` names another (a folder, `sqlite:///...`, a
    tracking server's `http(s)://` address):

    - at the start, the run's parameters: the config as `config.json` holds it, flattened to
      dotted keys (`trainer.optimizer.lr`), and `config.json` itself as an artifact;
    - every epoch, its `training_*` and `validation_*` metrics (step: the epoch, from 0), and
      every `batch_interval` batches the batch loss (step: the batches trained);
    - once `allennlp train` has written `metrics.json` and the archive, the final metrics (its
      numbers other than the last epoch's: `best_*`, `test_*`, `best_epoch`, peak memory) and
      `metrics.json`, `model.tar.gz` (with `log_archive`) and `out.log` as artifacts; the run
      ends FINISHED, or KILLED (Ctrl-C, SIGTERM) or FAILED if training did not end.

    The run is named after the serialization directory unless `run_name` is given, and tagged
    `allennlp.serialization_dir`. Its id and store are written to `mlflow_run.json` in the
    serialization directory; `allennlp train --recover` logs on into the same run. Only the
    primary worker of distributed training logs. Needs the `mlflow` package (`mlflow-skinny`
    is enough; `pip install 'tft-allennlp[tracking]'`); the MLflow UI (`mlflow ui
    --backend-store-uri mlruns`) comes with the full `mlflow` package.

    Registered as a `TrainerCallback` with name "mlflow".

    # Parameters

    serialization_dir : `str`
        Supplied by the trainer.
    tracking_uri : `str`, optional (default = `None`)
        The MLflow store: `MLFLOW_TRACKING_URI` if set, else `mlruns` in the working directory.
        A relative folder is taken from the working directory.
    experiment_name : `str`, optional (default = `None`)
        The MLflow experiment, created if missing: `MLFLOW_EXPERIMENT_NAME` if set, else MLflow's
        "Default".
    run_name : `str`, optional (default = `None`)
        The run's name in MLflow; the serialization directory's name if not given.
    tags : `Dict[str, str]`, optional (default = `None`)
        Tags for the run, beside `allennlp.serialization_dir`.
    batch_interval : `int`, optional (default = `100`)
        Logs the batch loss every this many batches; `0` logs per epoch only.
    log_archive : `bool`, optional (default = `True`)
        Whether `model.tar.gz` is logged as an artifact (the whole model: hundreds of megabytes
        for a base-size encoder).
    """

    def __init__(
        self,
        serialization_dir: str,
        tracking_uri: Optional[str] = None,
        experiment_name: Optional[str] = None,
        run_name: Optional[str] = None,
        tags: Optional[Dict[str, str]] = None,
        batch_interval: int = 100,
        log_archive: bool = True,
    ) -> None:
        super().__init__(serialization_dir)
        if batch_interval < 0:
            raise ConfigurationError(f"batch_interval must be 0 or more, not {batch_interval}")
        self._tracking_uri = store_uri(tracking_uri)
        self._experiment_name = experiment_name or os.environ.get("MLFLOW_EXPERIMENT_NAME")
        self._run_name = run_name or os.path.basename(os.path.abspath(serialization_dir))
        self._tags = {str(key): str(value) for key, value in (tags or {}).items()}
        self._batch_interval = batch_interval
        self._log_archive = log_archive
        self._client: Optional["MlflowClient"] = None
        self._run_id: Optional[str] = None

    def on_start(
        self, trainer: "GradientDescentTrainer", is_primary: bool = True, **kwargs
    ) -> None:
        if not is_primary:
            return
        self._client = mlflow_client(self._tracking_uri)
        record = os.path.join(self.serialization_dir, MLFLOW_RUN)
        if os.path.isfile(record):  # a recovered run: its MLflow run goes on
            with open(record) as stream:
                self._run_id = json.load(stream)["run_id"]
            self._client.update_run(self._run_id, status="RUNNING")
            logger.info(
                "Tracking in MLflow run %s (%s), resumed.", self._run_id, self._tracking_uri
            )
            return
        experiment_id = experiment_named(self._client, self._experiment_name)
        tags = {"allennlp.serialization_dir": os.path.abspath(self.serialization_dir)}
        run = self._client.create_run(
            experiment_id, run_name=self._run_name, tags={**tags, **self._tags}
        )
        self._run_id = run.info.run_id
        write_json_atomically(
            record,
            {
                "tracking_uri": self._tracking_uri,
                "experiment_id": experiment_id,
                "run_id": self._run_id,
                "log_archive": self._log_archive,
            },
        )
        config = os.path.join(self.serialization_dir, "config.json")
        parameters, left_out = config_parameters(Params.from_file(config).as_dict(quiet=True))
        for key, length in left_out:
            logger.warning(
                "MLflow: the parameter %s is not logged: its value has %d characters, more than "
                "MLflow's %d (the config.json artifact holds it).",
                key,
                length,
                MAX_PARAMETER_LENGTH,
            )
        log_batches(self._client, self._run_id, parameters=parameters)
        self._client.log_artifact(self._run_id, config)
        logger.info("Tracking in MLflow run %s (%s).", self._run_id, self._tracking_uri)

    def on_batch(
        self,
        trainer: "GradientDescentTrainer",
        batch_inputs: List[TensorDict],
        batch_outputs: List[Dict[str, Any]],
        batch_metrics: Dict[str, Any],
        epoch: int,
        batch_number: int,
        is_training: bool,
        is_primary: bool = True,
        batch_grad_norm: Optional[float] = None,
        **kwargs,
    ) -> None:
        if not (is_training and is_primary and self._batch_interval and self._run_id):
            return
        if batch_number % self._batch_interval == 0 and "batch_loss" in batch_metrics:
            step = trainer._total_batches_completed
            metrics = {"batch_loss": float(batch_metrics["batch_loss"])}
            log_batches(self._client, self._run_id, metrics=metrics, step=step)

    def on_epoch(
        self,
        trainer: "GradientDescentTrainer",
        metrics: Dict[str, Any],
        epoch: int,
        is_primary: bool = True,
        **kwargs,
    ) -> None:
        if not (is_primary and self._run_id):
            return
        log_batches(self._client, self._run_id, metrics=epoch_metrics(metrics), step=epoch)

    @staticmethod
    def after_training(serialization_dir: str, error: Optional[BaseException]) -> None:
        """
        Called by `allennlp train` in its own process once training is over, after
        `metrics.json` and the archive are written (`error`: what ended it otherwise): logs the
        final metrics and files of the MLflow run that `mlflow_run.json` names, and ends it.
        """
        record = os.path.join(serialization_dir, MLFLOW_RUN)
        if not os.path.isfile(record):  # stopped before the run started
            return
        with open(record) as stream:
            run = json.load(stream)
        client = mlflow_client(run["tracking_uri"])
        run_id = run["run_id"]
        metrics_file = os.path.join(serialization_dir, "metrics.json")
        if error is None and os.path.isfile(metrics_file):
            with open(metrics_file) as stream:
                log_batches(client, run_id, metrics=final_metrics(json.load(stream)))
            client.log_artifact(run_id, metrics_file)
        archive = os.path.join(serialization_dir, "model.tar.gz")
        if error is None and os.path.isfile(archive) and run["log_archive"]:
            client.log_artifact(run_id, archive)
        log = os.path.join(serialization_dir, "out.log")
        if os.path.isfile(log):
            client.log_artifact(run_id, log)
        if error is None:
            status = "FINISHED"
        elif stopped(error):
            status = "KILLED"
        else:
            status = "FAILED"
        client.set_terminated(run_id, status=status)
        logger.info("MLflow run %s: %s.", run_id, status)


def mlflow_client(tracking_uri: str) -> "MlflowClient":
    """
    A client of the store at `tracking_uri`. MLflow's log lines (its database's set-up) go to
    the run's log, as AllenNLP's do, rather than to the terminal through a handler of their own.
    """
    from mlflow import MlflowClient

    mlflow_logger = logging.getLogger("mlflow")
    for handler in list(mlflow_logger.handlers):
        mlflow_logger.removeHandler(handler)
    mlflow_logger.propagate = True
    return MlflowClient(tracking_uri)


def experiment_named(client: "MlflowClient", name: Optional[str]) -> str:
    """
    The id of the MLflow experiment `name`; None: MLflow's "Default". A missing one is created,
    in a local SQLite store with its artifacts beside the database (`mlruns/NAME`), wherever the
    command runs (MLflow's default, `mlruns/` in the working directory, would scatter them).
    """
    if name is None:
        return "0"  # every store has it
    experiment = client.get_experiment_by_name(name)
    if experiment is not None:
        return experiment.experiment_id
    location = None
    uri = client.tracking_uri
    if uri.startswith("sqlite:///") and uri != "sqlite:///:memory:":
        folder = os.path.dirname(uri[len("sqlite:///") :])
        location = os.path.join(folder, "mlruns", name.replace(os.sep, "_"))
    return client.create_experiment(name, artifact_location=location)


def store_uri(tracking_uri: Optional[str]) -> str:
    """
    The MLflow store: `tracking_uri`, else `MLFLOW_TRACKING_URI`, else `mlflow.db` in the working
    directory; a relative SQLite file or folder made absolute, so that every process of the run
    (and a resumed one) finds the same store.
    """
    uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{DEFAULT_STORE}"
    if uri.startswith("sqlite:///"):
        path = uri[len("sqlite:///") :]
        return (
            uri
            if path.startswith("/") or path == ":memory:"
            else f"sqlite:///{os.path.abspath(path)}"
        )
    if urllib.parse.urlparse(uri).scheme or uri == "databricks":
        return uri
    return os.path.abspath(uri)


def config_parameters(config: Dict[str, Any]) -> Tuple[Dict[str, str], List[Tuple[str, int]]]:
    """
    The `config` flattened to dotted keys (a list's items by index: `trainer.callbacks.0.type`)
    with their values as text, and the keys (with their length) whose value is longer than
    MLflow takes.
    """
    flat: Dict[str, str] = {}

    def flatten(prefix: str, value: Any) -> None:
        if isinstance(value, dict) and value:
            for key, item in value.items():
                flatten(f"{prefix}.{key}" if prefix else str(key), item)
        elif isinstance(value, list) and value and any(isinstance(v, (dict, list)) for v in value):
            for index, item in enumerate(value):
                flatten(f"{prefix}.{index}", item)
        else:
            flat[prefix] = value if isinstance(value, str) else json.dumps(value)

    flatten("", config)
    left_out = [(key, len(text)) for key, text in flat.items() if len(text) > MAX_PARAMETER_LENGTH]
    for key, _ in left_out:
        del flat[key]
    return flat, left_out


def stopped(error: BaseException) -> bool:
    """Whether `error` is a stop that the user asked for: Ctrl-C, or a stop signal."""
    if isinstance(error, KeyboardInterrupt) or type(error).__name__ == "SigTermReceived":
        return True
    # A run stopped at its batch by a signal exits with 128 + its number
    # (`tft_allennlp.training.stop_signals`).
    return isinstance(error, SystemExit) and isinstance(error.code, int) and error.code > 128


def epoch_metrics(metrics: Dict[str, Any]) -> Dict[str, float]:
    """The numbers of an epoch's metrics (AllenNLP's `metrics_epoch_N.json`) that are its own."""
    return {
        key: float(value)
        for key, value in metrics.items()
        if key.startswith(EPOCH_PREFIXES) and _is_number(value)
    }


def final_metrics(metrics: Dict[str, Any]) -> Dict[str, float]:
    """
    The numbers of a run's final metrics (`metrics.json`) other than its last epoch's: `best_*`,
    `test_*`, `best_epoch`, peak memory.
    """
    return {
        key: float(value)
        for key, value in metrics.items()
        if not key.startswith(EPOCH_PREFIXES) and _is_number(value)
    }


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def log_batches(
    client: Optional["MlflowClient"],
    run_id: str,
    metrics: Optional[Dict[str, float]] = None,
    parameters: Optional[Dict[str, str]] = None,
    step: int = 0,
) -> None:
    """`metrics` (at `step`) and `parameters`, in as few `log_batch` calls as MLflow allows."""
    from mlflow.entities import Metric, Param

    assert client is not None
    now = int(time.time() * 1000)
    metric_list = [Metric(key, value, now, step) for key, value in (metrics or {}).items()]
    parameter_list = [Param(key, value) for key, value in (parameters or {}).items()]
    for start in range(0, len(metric_list), METRICS_PER_BATCH):
        client.log_batch(run_id, metrics=metric_list[start : start + METRICS_PER_BATCH])
    for start in range(0, len(parameter_list), PARAMETERS_PER_BATCH):
        client.log_batch(run_id, params=parameter_list[start : start + PARAMETERS_PER_BATCH])
