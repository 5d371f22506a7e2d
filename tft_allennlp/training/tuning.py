"""
What `allennlp tft-tune` searches and how each trial trains: the search space a training config
declares in its `tuning` block (or the default one), the config of a trial (its sampled values,
a validation split carved from the training data, pruning), and the study's storage.

A config's `tuning` block, which `allennlp train` ignores:

    tuning: {
      // Each key a dotted config path, as `-o` takes it; each range one of:
      //   {low: 1e-5, high: 1e-4, log: true}   floats (log: sampled on a log scale)
      //   {low: 2, high: 5}                    integers, both ends included
      //   {choices: [16, 32]}                  one of these values
      space: {
        'trainer.optimizer.lr': { low: 1e-5, high: 1e-4, log: true },
        'trainer.num_epochs': { low: 2, high: 5 },
        'trainer.learning_rate_scheduler.warmup_fraction': { low: 0.0, high: 0.2 },
        'data_loader.batch_size': { choices: [16, 32] },
      },
      held_out_fraction: 0.1,  // the part of the training data each trial validates on
    }

Without a `space`, the learning rate is searched on a log scale over a factor of 5 either side
of the config's own (`DEFAULT_LR_FACTOR`): 6e-6 to 1.5e-4 for the GLUE configs' 3e-5, 1e-4 to
2.5e-3 for LoRA's 5e-4.
"""

import copy
import math
import os
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from allennlp.common.checks import ConfigurationError
from allennlp.common.params import with_overrides

from tft_allennlp.common.folder_lock import HOST, process_alive

if TYPE_CHECKING:  # for annotations only
    import optuna

# The config's block that `tft-tune` reads and `allennlp train` leaves out.
TUNING_KEY = "tuning"
DEFAULT_LR_FACTOR = 5.0
DEFAULT_HELD_OUT_FRACTION = 0.1
LR = "trainer.optimizer.lr"
# The reader the validation split is carved by (`held_out_fraction`).
CARVING_READER = "tft_glue"
# A trial's user attributes: the process that trains it, its serialization directory, the
# directory of the killed trial whose checkpoint it goes on from, and whether a signal stopped it.
WORKER, DIRECTORY, RESUMES, STOPPED = "worker", "serialization_dir", "resumes", "stopped"


class Range:
    """One dimension of the search space: a config path and how its value is sampled."""

    def __init__(self, path: str, spec: Dict[str, Any], where: str) -> None:
        self.path = path
        self.choices: Optional[List[Any]] = None
        self.low: Any = None
        self.high: Any = None
        self.log = bool(spec.get("log", False))
        unknown = set(spec) - {"low", "high", "log", "choices"}
        if unknown:
            raise ConfigurationError(
                f"{where}.{path}: unknown key {sorted(unknown)[0]!r} (a range has low, high and "
                "log, or choices)"
            )
        if "choices" in spec:
            if not isinstance(spec["choices"], list) or not spec["choices"]:
                raise ConfigurationError(f"{where}.{path}.choices must be a non-empty list")
            self.choices = spec["choices"]
            return
        low: Any = spec.get("low")
        high: Any = spec.get("high")
        numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (low, high))
        if not numbers or low > high:
            raise ConfigurationError(
                f"{where}.{path}: a range needs numbers low <= high (or choices), not "
                f"low={low!r}, high={high!r}"
            )
        if self.log and low <= 0:
            raise ConfigurationError(f"{where}.{path}: a log range needs low > 0, not {low}")
        self.low, self.high = low, high

    @property
    def integer(self) -> bool:
        return isinstance(self.low, int) and isinstance(self.high, int)

    def sample(self, trial: "optuna.Trial") -> Any:
        if self.choices is not None:
            return trial.suggest_categorical(self.path, self.choices)
        if self.integer:
            return trial.suggest_int(self.path, self.low, self.high, log=self.log)
        return trial.suggest_float(self.path, float(self.low), float(self.high), log=self.log)

    def describe(self) -> str:
        if self.choices is not None:
            return f"{self.path} in {self.choices}"
        scale = ", log scale" if self.log else ""
        return f"{self.path} from {self.low:g} to {self.high:g}{scale}"


class SearchSpace:
    """
    The ranges `tft-tune` samples and the fraction of the training data it validates on, from a
    training config's `tuning` block (see the module's docstring), which it takes out of the
    config.
    """

    def __init__(self, config: Dict[str, Any], where: str = "the config") -> None:
        block = config.pop(TUNING_KEY, None) or {}
        if not isinstance(block, dict):
            raise ConfigurationError(f"{where}: {TUNING_KEY} must be an object")
        unknown = set(block) - {"space", "held_out_fraction"}
        if unknown:
            raise ConfigurationError(
                f"{where}: {TUNING_KEY}.{sorted(unknown)[0]} is not a key of the tuning block "
                "(space, held_out_fraction)"
            )
        space = block.get("space") or {LR: _default_lr_range(config, where)}
        if not isinstance(space, dict):
            raise ConfigurationError(f"{where}: {TUNING_KEY}.space must be an object")
        self.ranges = [
            Range(path, spec, f"{where}: {TUNING_KEY}.space") for path, spec in space.items()
        ]
        for sampled in self.ranges:
            _check_path(config, sampled.path, where)
        self.held_out_fraction = float(block.get("held_out_fraction", DEFAULT_HELD_OUT_FRACTION))
        if not 0.0 < self.held_out_fraction < 1.0:
            raise ConfigurationError(
                f"{where}: {TUNING_KEY}.held_out_fraction must be between 0 and 1, not "
                f"{self.held_out_fraction}"
            )

    def sample(self, trial: "optuna.Trial") -> Dict[str, Any]:
        """The trial's values, by config path."""
        return {sampled.path: sampled.sample(trial) for sampled in self.ranges}


def _default_lr_range(config: Dict[str, Any], where: str) -> Dict[str, Any]:
    lr = config.get("trainer", {}).get("optimizer", {}).get("lr")
    if not isinstance(lr, (int, float)) or lr <= 0:
        raise ConfigurationError(
            f"{where}: no {TUNING_KEY}.space and no trainer.optimizer.lr to search around; "
            "declare the space (docs/tuning.md)"
        )
    return {"low": lr / DEFAULT_LR_FACTOR, "high": lr * DEFAULT_LR_FACTOR, "log": True}


def _check_path(config: Dict[str, Any], path: str, where: str) -> None:
    """A searched path's parent must be in the config (the value itself may be a default)."""
    node: Any = config
    parts = path.split(".")
    for depth, part in enumerate(parts[:-1]):
        if not isinstance(node, dict) or part not in node:
            raise ConfigurationError(
                f"{where}: {TUNING_KEY}.space: {path}: the config has no "
                f"{'.'.join(parts[: depth + 1])}"
            )
        node = node[part]


def validation_metric(config: Dict[str, Any]) -> Tuple[str, str]:
    """The metric that picks the best epoch (`trainer.validation_metric`), and its direction."""
    metric = config.get("trainer", {}).get("validation_metric", "-loss")
    if isinstance(metric, list):
        if len(metric) != 1:
            raise ConfigurationError(
                "tft-tune optimises one validation_metric; the config has several: " + str(metric)
            )
        metric = metric[0]
    return metric[1:], ("maximize" if metric.startswith("+") else "minimize")


def trial_config(
    config: Dict[str, Any], values: Dict[str, Any], held_out_fraction: float, where: str
) -> Dict[str, Any]:
    """
    The config a trial trains: `config` with its sampled `values`, validated on a part of the
    training data carved out of it (`held_out_fraction`, the `tft_glue` reader's, with its
    `seed`) instead of the validation file, with no test set, and pruned
    (`tft_optuna_pruning`).
    """
    trial = with_overrides(copy.deepcopy(config), values)
    reader = trial.get("dataset_reader")
    if not isinstance(reader, dict) or reader.get("type") != CARVING_READER:
        raise ConfigurationError(
            f"{where}: tft-tune carves its validation split from the training data with the "
            f"{CARVING_READER} reader; this config's dataset_reader is "
            f"{reader.get('type') if isinstance(reader, dict) else reader!r}"
        )
    trial["dataset_reader"] = {**reader, "held_out_fraction": held_out_fraction}
    # A copy of its own: building a reader pops the keys of its nested parts.
    trial["validation_dataset_reader"] = {
        **copy.deepcopy(trial["dataset_reader"]),
        "held_out": True,
    }
    trial["validation_data_path"] = trial["train_data_path"]
    for key in ("test_data_path", "evaluate_on_test"):
        trial.pop(key, None)
    trainer = trial.setdefault("trainer", {})
    callbacks = [c for c in trainer.get("callbacks", []) if not _is_tracker(c)]
    trainer["callbacks"] = callbacks + [{"type": "tft_optuna_pruning"}]
    return trial


def _is_tracker(callback: Any) -> bool:
    """Trackers stay out of trials: one run per trial would crowd the user's store."""
    name = callback.get("type") if isinstance(callback, dict) else callback
    return name in ("mlflow", "wandb", "tensorboard")


def open_storage(url: str) -> Any:
    """
    The study's storage: `journal:PATH` a journal file (several machines through a shared file
    system), else a database URL (`sqlite:///...`, `postgresql://...`, `mysql://...`).
    """
    import optuna

    if url.startswith("journal:"):
        from optuna.storages.journal import JournalFileBackend, JournalStorage

        path = url[len("journal:") :]
        return JournalStorage(JournalFileBackend(os.path.abspath(path)))
    return optuna.storages.RDBStorage(url)


def this_worker() -> str:
    return f"{HOST}:{os.getpid()}"


def take_back_dead_trials(study: "optuna.Study") -> List[int]:
    """
    The trials that stopped before they ended: left running by a process of this machine that
    is gone (killed), or stopped by Ctrl-C or a signal (`STOPPED`). Each is marked FAIL (if it
    was left running) and queued again with its values, once, to go on from its checkpoint.
    Returns their numbers. (A trial left running by another machine is taken back when
    `tft-tune` starts there again.)
    """
    from optuna.trial import TrialState

    trials = study.get_trials(deepcopy=False)
    queued = {trial.user_attrs.get(RESUMES) for trial in trials}
    taken = []
    for trial in trials:
        worker_host, _, pid = str(trial.user_attrs.get(WORKER, "")).rpartition(":")
        dead = (
            trial.state == TrialState.RUNNING
            and worker_host == HOST
            and pid.isdigit()
            and int(pid) != os.getpid()
            and not process_alive(int(pid))
        )
        stopped = trial.state == TrialState.FAIL and trial.user_attrs.get(STOPPED)
        if not (dead or stopped) or trial.user_attrs.get(DIRECTORY) in queued:
            continue
        if dead:
            study._storage.set_trial_state_values(trial._trial_id, state=TrialState.FAIL)
        resumes = {RESUMES: trial.user_attrs[DIRECTORY]} if DIRECTORY in trial.user_attrs else {}
        study.enqueue_trial(trial.params, user_attrs=resumes, skip_if_exists=False)
        taken.append(trial.number)
    return taken


def describe_value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if not math.isnan(value) else "nan"
    return str(value)
