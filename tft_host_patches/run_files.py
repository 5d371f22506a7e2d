"""
Every file `allennlp train` writes to the serialization directory lands atomically, and the
archive holds the weights of the epoch that `metrics.json` names as best.

AllenNLP 2.10 writes `config.json`, `meta.json`, the vocabulary, `metrics_epoch_N.json`,
`metrics.json` and `model.tar.gz` in place: a process killed while it writes one leaves it
truncated, and a truncated `config.json` makes `--recover` fail (`STATIC ERROR ... config.json`).
`install()`, which importing the plugin calls, wraps those writers so that each file is drafted
beside its final name and renamed over it (`tft_allennlp.common.atomic_files`):

- `Params.to_file` and `Meta.to_file` (`config.json`, `meta.json`);
- `dump_metrics` (`metrics_epoch_N.json`, `metrics.json`, and `allennlp evaluate
  --output-file`);
- `Vocabulary.save_to_files`: the whole `vocabulary/` directory appears at once (or, when it
  exists, each of its files is replaced atomically);
- the archiving of `allennlp train`: `model.tar.gz` appears whole, and before it is written,
  `best.th` is checked against the end-of-epoch checkpoint of the best epoch that
  `metrics.json` names (which the `tft_atomic` checkpointer keeps); weights that differ are
  replaced by that checkpoint's, with a warning;
- `allennlp train --recover` first removes the drafts of a killed run, and starts from scratch
  when the directory holds nothing else but its lock (the run was killed before its config was
  written), where AllenNLP would refuse;
- before anything is written, every key of the config (overrides applied) is checked against
  the constructors that will read it (`tft_allennlp.common.config_keys`): a key that nothing
  reads, such as `trainer.num_epoch`, which AllenNLP ignores, is an error that suggests the
  closest valid key.

Disk errors while writing any of these name the file. Nothing else of AllenNLP changes.
"""

import copy
import glob
import json
import logging
import os
import shutil
import tempfile
from dataclasses import asdict
from typing import Any, Dict, List, Optional

import allennlp.commands.train as train_command
import allennlp.evaluation.evaluator as evaluator_module
import allennlp.training.util as training_util
from allennlp.common import Params
from allennlp.common import util as common_util
from allennlp.common.meta import Meta
from allennlp.data import Vocabulary

from tft_host_patches import previous, replace

logger = logging.getLogger(__name__)

PATCH = "run_files"
BEST_WEIGHTS = "best.th"

_installed = False


def install() -> None:
    """Wraps AllenNLP's writers of run files (once per process)."""
    global _installed
    if _installed:
        return
    _installed = True
    replace(Params, "to_file", _params_to_file, patch=PATCH)
    replace(Meta, "to_file", _meta_to_file, patch=PATCH)
    replace(Vocabulary, "save_to_files", _save_vocabulary, patch=PATCH)
    for module in (common_util, training_util, evaluator_module):
        replace(module, "dump_metrics", dump_metrics, patch=PATCH)
    replace(train_command, "archive_model", archive_model, patch=PATCH)
    replace(train_command, "train_model", train_model, patch=PATCH)


def _params_to_file(
    self: Params, params_file: str, preference_orders: Optional[List[List[str]]] = None
) -> None:
    from tft_allennlp.common.atomic_files import atomic_output

    with atomic_output(params_file) as handle:
        json.dump(self.as_ordered_dict(preference_orders), handle, indent=4)


def _meta_to_file(self: Meta, path: str) -> None:
    from tft_allennlp.common.atomic_files import atomic_output

    with atomic_output(str(path)) as handle:
        json.dump(asdict(self), handle)


def dump_metrics(file_path: Optional[str], metrics: Dict[str, Any], log: bool = False) -> None:
    """AllenNLP's `dump_metrics`, writing the file atomically."""
    from tft_allennlp.common.atomic_files import atomic_output

    metrics_json = json.dumps(metrics, indent=2)
    if file_path:
        with atomic_output(str(file_path)) as handle:
            handle.write(metrics_json)
    if log:
        logger.info("Metrics: %s", metrics_json)


def _save_vocabulary(self: Vocabulary, directory: str) -> None:
    from tft_allennlp.common.atomic_files import DRAFT_PREFIX, naming_path

    directory = os.path.abspath(str(directory))
    parent = os.path.dirname(directory)
    with naming_path(directory):
        os.makedirs(parent, exist_ok=True)
        draft = tempfile.mkdtemp(
            prefix=DRAFT_PREFIX + os.path.basename(directory) + ".", dir=parent
        )
    try:
        with naming_path(directory):
            previous(Vocabulary, "save_to_files", PATCH)(self, draft)
            for name in os.listdir(draft):
                with open(os.path.join(draft, name), "rb") as stream:
                    os.fsync(stream.fileno())
            if os.path.isdir(directory) and os.listdir(directory):
                for name in os.listdir(draft):
                    os.replace(os.path.join(draft, name), os.path.join(directory, name))
                os.rmdir(draft)
            else:
                os.rename(draft, directory)  # replaces an empty directory
    except BaseException:
        shutil.rmtree(draft, ignore_errors=True)
        raise


def archive_model(
    serialization_dir: str,
    weights: str = BEST_WEIGHTS,
    archive_path: Optional[str] = None,
    include_in_archive: Optional[List[str]] = None,
) -> str:
    """
    AllenNLP's `archive_model`, with the best weights verified first (`verify_best_weights`)
    and the archive written atomically.
    """
    from tft_allennlp.common.atomic_files import write_atomically

    if weights == BEST_WEIGHTS:
        verify_best_weights(str(serialization_dir))
    archive_file = archive_path or os.path.join(serialization_dir, "model.tar.gz")
    if os.path.isdir(archive_file):
        archive_file = os.path.join(archive_file, "model.tar.gz")

    def archive(draft: str) -> None:
        archive_model_ = previous(train_command, "archive_model", PATCH)
        archive_model_(serialization_dir, weights, draft, include_in_archive)

    write_atomically(str(archive_file), archive)
    return str(archive_file)


def verify_best_weights(serialization_dir: str) -> None:
    """
    Makes `best.th` the weights of the epoch that `metrics.json` names as best: the model
    state of the checkpoint at the end of that epoch, which the `tft_atomic` checkpointer
    keeps. Does nothing where that checkpoint is not at hand (another checkpointer), or the
    best weights are a moving average rather than a checkpoint's.
    """
    from tft_allennlp.common.atomic_files import link_atomically, same_content

    checkpoint = best_epoch_checkpoint(serialization_dir)
    if checkpoint is None:
        return
    best = os.path.join(serialization_dir, BEST_WEIGHTS)
    if os.path.isfile(best) and same_content(checkpoint, best):
        return
    logger.warning(
        "%s is not the weights of the best epoch that metrics.json names; replacing it with %s.",
        best,
        checkpoint,
    )
    link_atomically(checkpoint, best)


def best_epoch_checkpoint(serialization_dir: str) -> Optional[str]:
    """
    The model state saved at the end of the epoch whose weights `best.th` must hold (the best
    epoch of `metrics.json`; without validation, its last epoch), if that file exists.
    """
    try:
        with open(os.path.join(serialization_dir, "config.json")) as handle:
            trainer = json.load(handle).get("trainer", {})
        with open(os.path.join(serialization_dir, "metrics.json")) as handle:
            metrics = json.load(handle)
    except (OSError, ValueError, AttributeError):
        return None
    if trainer.get("moving_average") is not None:
        return None
    epoch = metrics.get("best_epoch")
    if epoch is None:
        epoch = metrics.get("epoch")
    if not isinstance(epoch, int):
        return None
    path = os.path.join(serialization_dir, f"model_state_e{epoch + 1}_b0.th")
    return path if os.path.isfile(path) else None


def train_model(params: Params, serialization_dir: str, recover: bool = False, **kwargs) -> Any:
    """
    AllenNLP's `train_model`, after the config's keys (and the packages of its callbacks) are
    checked and its `tuning` block (`allennlp tft-tune`'s) is set aside; with `recover`, the
    drafts of the killed run are removed first, and a directory with nothing else in it is
    trained from scratch.
    """
    from tft_allennlp.common.atomic_files import remove_drafts
    from tft_allennlp.common.config_keys import check_config_keys
    from tft_allennlp.common.optional_packages import check_optional_packages
    from tft_allennlp.common.transformer_source import ARCHIVED_TRANSFORMERS
    from tft_allennlp.training.serialization_dir import run_contents

    # The config's `tuning` block is `allennlp tft-tune`'s (tft_allennlp.training.tuning).
    params.pop("tuning", None)
    # A copy: training pops the keys of the params it reads.
    config = copy.deepcopy(params.as_dict(quiet=True))
    check_config_keys(config, "the training config")
    check_optional_packages(config, "the training config")
    if recover and os.path.isdir(serialization_dir):
        remove_drafts(serialization_dir)
        vocabulary = os.path.join(serialization_dir, "vocabulary")
        if os.path.isdir(vocabulary):
            remove_drafts(vocabulary)
        # The staging folders of the checkpoint copies the killed run was making.
        copies = os.path.join(serialization_dir, ARCHIVED_TRANSFORMERS)
        for staging in glob.glob(os.path.join(glob.escape(copies), ".staging-*")):
            shutil.rmtree(staging, ignore_errors=True)
        if not run_contents(serialization_dir):  # but its lock
            logger.warning(
                "%s is empty (the run was killed before it wrote config.json): training from "
                "the start.",
                serialization_dir,
            )
            recover = False
    train = previous(train_command, "train_model", PATCH)
    try:
        model = train(params, serialization_dir, recover=recover, **kwargs)
    except BaseException as error:
        _after_training(config, serialization_dir, error)
        raise
    _after_training(config, serialization_dir, None)
    return model


def _after_training(
    config: Dict[str, Any], serialization_dir: str, error: Optional[BaseException]
) -> None:
    """
    Calls `after_training(serialization_dir, error)` of each trainer callback class of the
    config that has one (the `mlflow` callback's: the run's archive and final metrics), in this
    process, once training is over (`error`: what ended it otherwise): after `metrics.json` and
    the archive are written, which AllenNLP does after the callbacks' `on_end`, and outside
    the workers of distributed training. Its failure is the command's, unless training had
    failed already: then it is logged, and the training's error goes on.
    """
    from allennlp.training.callbacks.callback import TrainerCallback

    from tft_allennlp.common.optional_packages import callback_names

    for _, name in callback_names(config):
        if name not in TrainerCallback.list_available():
            continue
        after = getattr(TrainerCallback.by_name(name), "after_training", None)
        if after is None:
            continue
        try:
            after(serialization_dir, error)
        except Exception:
            if error is None:
                raise
            logger.exception("The %r callback's after_training failed", name)
