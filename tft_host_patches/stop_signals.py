"""
`allennlp train` holds stop signals until the trainer can act on them: what
`tft_allennlp.training.stop_signals` describes, put in place. Wraps
`allennlp.commands.train.train_model` (the run listens, with the `tft_atomic` checkpointer),
`GradientDescentTrainer.train` (the checkpointer gets the request, also in distributed workers)
and `_train_worker` (a worker stopped by a signal ends without the interpreter's teardown).
Remove when AllenNLP's trainer checkpoints on a signal (`tests/training/stop_signals_test.py`,
`tests/training/recovery_test.py`).

A spawned worker of distributed training unpickles `_train_worker` by its name, importing this
module before anything of the plugin: so it imports the plugin only inside its functions (the
worker's first step imports the whole plugin, whose import installs every patch, as AllenNLP's
own worker would later), never at module level, which would re-enter `import tft_allennlp`
while this module is half-imported.
"""

import logging
import os
import sys
from typing import Any

import allennlp.commands.train as train_command
import torch
from allennlp.common import Params
from allennlp.training.gradient_descent_trainer import GradientDescentTrainer
from torch.multiprocessing import ProcessExitedException

from tft_host_patches import previous, replace

PATCH = "stop_signals"
_installed = False


def install() -> None:
    """
    Makes `allennlp train` and `GradientDescentTrainer.train` hold stop signals, and the workers
    of distributed training end as `_train_worker` says (once).
    """
    global _installed
    if _installed:
        return
    _installed = True
    replace(GradientDescentTrainer, "train", _train, patch=PATCH)
    replace(train_command, "train_model", _train_model, patch=PATCH)
    replace(train_command, "_train_worker", _train_worker, patch=PATCH)


def _train_model(params: Params, *args: Any, **kwargs: Any) -> Any:
    from tft_allennlp.common.child_processes import STOP_SIGNALS
    from tft_allennlp.training.stop_signals import CHECKPOINTER, listening

    trainer = params.as_dict(quiet=True).get("trainer") or {}
    if (trainer.get("checkpointer") or {}).get("type") != CHECKPOINTER:
        return previous(train_command, "train_model", PATCH)(params, *args, **kwargs)
    try:
        with listening():
            return previous(train_command, "train_model", PATCH)(params, *args, **kwargs)
    except ProcessExitedException as error:
        if error.exit_code - 128 not in STOP_SIGNALS:
            raise
        # The workers logged where they stopped; a traceback of the launcher would add nothing.
        raise SystemExit(error.exit_code) from None


def _train(self: GradientDescentTrainer) -> Any:
    # The checkpointer acts on the request `_train_model` holds, or, in the worker processes of
    # distributed training (which `_train_model` does not run in), on one held from here.
    from tft_allennlp.training.stop_signals import listening

    checkpointer: Any = getattr(self, "_checkpointer", None)
    if not hasattr(checkpointer, "stop_request"):
        return previous(GradientDescentTrainer, "train", PATCH)(self)
    with listening() as request:
        checkpointer.stop_request = request
        try:
            return previous(GradientDescentTrainer, "train", PATCH)(self)
        finally:
            checkpointer.stop_request = None


def _train_worker(*args: Any, **kwargs: Any) -> Any:
    """
    AllenNLP's `_train_worker`; a worker of distributed training that stops on a signal ends
    here, once every `finally` of the trainer and its callbacks has run, with its logs flushed
    and without the interpreter's teardown. That teardown frees the trainer, whose DDP reducer
    holds the process group past `process_group`'s exit handler, and gloo's threads, torn down
    with it, now and then aborted the worker ("terminate called without an active exception",
    SIGABRT): the launcher then reported a failure instead of the stop.
    """
    import tft_allennlp  # noqa: F401  (in a spawned worker: every patch, this one's `install` too)
    from tft_allennlp.common.child_processes import STOP_SIGNALS

    try:
        return previous(train_command, "_train_worker", PATCH)(*args, **kwargs)
    except SystemExit as error:
        status = error.code if isinstance(error.code, int) else 0
        if status - 128 not in STOP_SIGNALS or not torch.distributed.is_initialized():
            raise
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(status)
