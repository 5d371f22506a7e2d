"""
`allennlp tft-tune CONFIG -s DIR --trials N [--storage URL]`: searches the training config's
hyperparameters with Optuna, each trial an `allennlp train` of the config in `DIR/trials/`,
validated on a part of the training data carved out of it (never the validation file, which
stays for reporting), and pruned when it does worse than the trials before it did at the same
epoch. The search space is the config's `tuning` block, or the learning rate around the config's
own (`tft_allennlp.training.tuning`, docs/tuning.md).

The study lives in its storage (`DIR/study.db` unless `--storage` names another): the same
command run again goes on where it stopped until the study holds N finished (complete or pruned)
trials, a trial killed midway going on from its last checkpoint; several processes (on several
machines, through a journal file on a shared file system or a database server) given the same
storage and study share the work. It ends by printing the best trial and the `allennlp train`
command that trains its values on the whole training data, and writes both to `DIR/best.json`.
"""

import argparse
import copy
import json
import logging
import os
import shlex
import sys
from typing import Any, Dict, Optional

from allennlp.commands.subcommand import Subcommand
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError

from tft_allennlp.commands.arguments import positive_int
from tft_allennlp.common.atomic_files import write_json_atomically
from tft_allennlp.common.console import commands_only
from tft_allennlp.training.tuning import (
    DIRECTORY,
    RESUMES,
    STOPPED,
    WORKER,
    SearchSpace,
    describe_value,
    open_storage,
    take_back_dead_trials,
    this_worker,
    trial_config,
    validation_metric,
)

logger = logging.getLogger(__name__)

BEST = "best.json"
STUDY_DB = "study.db"


@Subcommand.register("tft-tune")
class Tune(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Search a training config's hyperparameters (its `tuning` block, or the learning "
            "rate) with Optuna, on a validation split carved from the training data; prints the "
            "best trial and the command that trains it."
        )
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("config", help="the training config (jsonnet or JSON)")
        subparser.add_argument(
            "-s",
            "--serialization-dir",
            required=True,
            help="where the trials train (DIR/trials/N) and the study is kept (DIR/study.db)",
        )
        subparser.add_argument(
            "--trials",
            type=positive_int,
            required=True,
            help="finished (complete or pruned) trials the study should hold",
        )
        subparser.add_argument(
            "--storage",
            help="the study's storage: a database URL (sqlite:///..., postgresql://...) or "
            "journal:PATH, a journal file on a shared file system (default: "
            "sqlite:///DIR/study.db)",
        )
        subparser.add_argument(
            "--study-name", default="tft-tune", help="the study in the storage (default tft-tune)"
        )
        subparser.add_argument(
            "-o",
            "--overrides",
            default="",
            help="a JSON structure of config overrides, as allennlp train takes",
        )
        subparser.add_argument(
            "--seed",
            type=int,
            help="seed of the sampler, added to the number of trials the study holds (the same "
            "seed and study draw the same values; give each process sharing a study its own)",
        )
        subparser.set_defaults(func=_tune_from_args)
        return subparser


def _tune_from_args(args: argparse.Namespace) -> None:
    try:
        tune(args)
    except ConfigurationError as error:
        sys.exit(f"tft-tune: {error}")


def tune(args: argparse.Namespace) -> Dict[str, Any]:
    """Runs the study `args` describe until it holds `args.trials` finished trials; its best."""
    import optuna

    config = Params.from_file(args.config, args.overrides).as_dict(quiet=True)
    if config.get("distributed"):
        # Each trial trains in this process, reporting its epochs to Optuna as they end.
        raise ConfigurationError(
            f"{args.config}: tft-tune trains each trial in one process, not distributed; tune "
            """without it (-o '{"distributed": null}'), then train the best trial distributed"""
        )
    space = SearchSpace(config, args.config)
    metric, direction = validation_metric(config)
    directory = os.path.abspath(args.serialization_dir)
    os.makedirs(os.path.join(directory, "trials"), exist_ok=True)
    storage_url = args.storage or f"sqlite:///{os.path.join(directory, STUDY_DB)}"
    optuna.logging.disable_default_handler()  # its lines go to the log, as AllenNLP's
    optuna.logging.enable_propagation()
    study = optuna.create_study(
        storage=open_storage(storage_url),
        study_name=args.study_name,
        direction=direction,  # type: ignore[arg-type]
        load_if_exists=True,
        pruner=optuna.pruners.MedianPruner(n_startup_trials=3, n_warmup_steps=0),
    )
    # Seeded past the trials the study holds: a study gone on with the same --seed draws new
    # values, not those of its first trials again.
    offset = len(study.get_trials(deepcopy=False))
    study.sampler = optuna.samplers.TPESampler(
        seed=None if args.seed is None else args.seed + offset
    )
    if study.direction.name.lower() != direction:
        raise ConfigurationError(
            f"the study {args.study_name!r} in {storage_url} maximises or minimises otherwise "
            f"than this config's validation_metric ({direction})"
        )
    taken = take_back_dead_trials(study)
    if taken:
        logger.info("Trials %s stopped before they ended: queued again.", taken)
    logger.info(
        "Searching %s; validating on %.0f%% of the training data (%s, %s).",
        "; ".join(sampled.describe() for sampled in space.ranges),
        100 * space.held_out_fraction,
        metric,
        direction,
    )

    def objective(trial: optuna.Trial) -> float:
        return _train_trial(trial, config, space, metric, directory, args.config)

    finished = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
    if len(study.get_trials(deepcopy=False, states=finished)) < args.trials:
        # A line per trial and its progress bars; each training's full output is in its log.
        with commands_only():
            study.optimize(
                objective,
                callbacks=[optuna.study.MaxTrialsCallback(args.trials, states=finished)],
                catch=(),
            )
    return _report_best(study, args, metric, directory)


def _train_trial(
    trial: "Any",
    config: Dict[str, Any],
    space: SearchSpace,
    metric: str,
    directory: str,
    config_path: str,
) -> float:
    """Trains one trial: its sampled values on the carved split; the best epoch's metric."""
    from allennlp.commands.train import train_model

    from tft_allennlp.training.callbacks.optuna_pruning import training_trial

    values = space.sample(trial)
    resumes: Optional[str] = trial.user_attrs.get(RESUMES)
    recover = resumes is not None and _has_checkpoint(resumes)
    serialization_dir = os.path.join(directory, "trials", str(trial.number))
    if resumes is not None and recover:
        serialization_dir = resumes
    trial.set_user_attr(WORKER, this_worker())
    trial.set_user_attr(DIRECTORY, serialization_dir)
    described = ", ".join(f"{path} {describe_value(value)}" for path, value in values.items())
    logger.info(
        "Trial %d: %s%s", trial.number, described, " (from its checkpoint)" if recover else ""
    )
    trained = trial_config(config, values, space.held_out_fraction, config_path)
    try:
        with training_trial(trial):
            train_model(Params(trained), serialization_dir, recover=recover)
    except (KeyboardInterrupt, SystemExit):
        trial.set_user_attr(STOPPED, True)
        raise
    with open(os.path.join(serialization_dir, "metrics.json")) as stream:
        metrics = json.load(stream)
    value = float(metrics[f"best_validation_{metric}"])
    logger.info("Trial %d: %s %.4f (%s)", trial.number, metric, value, serialization_dir)
    return value


def _has_checkpoint(serialization_dir: str) -> bool:
    return os.path.isdir(serialization_dir) and any(
        name.startswith("training_state_") for name in os.listdir(serialization_dir)
    )


def _report_best(
    study: Any, args: argparse.Namespace, metric: str, directory: str
) -> Dict[str, Any]:
    import optuna

    finished = study.get_trials(
        deepcopy=False,
        states=(optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED),
    )
    complete = [t for t in finished if t.state == optuna.trial.TrialState.COMPLETE]
    if not complete:
        raise ConfigurationError(
            f"none of the study's {len(finished)} finished trials completed (all pruned)"
        )
    best = study.best_trial
    overrides = _merged_overrides(args.overrides, best.params)
    command = shlex.join(
        ["allennlp", "train", args.config, "-s", "OUTPUT_DIR", "-o", json.dumps(overrides)]
    )
    result = {
        "study": args.study_name,
        "trials": len(finished),
        "pruned": len(finished) - len(complete),
        "best_trial": best.number,
        "metric": metric,
        "value": best.value,
        "params": best.params,
        "command": command,
    }
    write_json_atomically(os.path.join(directory, BEST), result)
    logger.info(
        "Best of %d trials (%d pruned): trial %d, %s %.4f; %s",
        len(finished),
        len(finished) - len(complete),
        best.number,
        metric,
        best.value,
        ", ".join(f"{path} {describe_value(value)}" for path, value in best.params.items()),
    )
    logger.info("Train it on the whole training data: %s", command)
    return result


def _merged_overrides(overrides: str, params: Dict[str, Any]) -> Dict[str, Any]:
    """The command's own overrides with the best trial's values (dotted keys) over them."""
    merged: Dict[str, Any] = copy.deepcopy(json.loads(overrides)) if overrides.strip() else {}
    merged.update(params)
    return merged
