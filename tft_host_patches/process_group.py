"""
AllenNLP 2.10's distributed `allennlp train` creates a process group in every spawned worker
and never destroys it. With current torch, a gloo worker that reaches interpreter shutdown with
its process group alive can abort ("terminate called without an active exception", SIGABRT)
after training has finished, and `allennlp train` then fails although every epoch ran: gloo's
threads still hold work whose tensors need the interpreter being torn down.

AllenNLP imports plugins in every spawned worker, so `install` (which importing the plugin calls)
registers an exit handler there that destroys the process group while the interpreter is still
whole. It does nothing where no process group exists, or where one was already destroyed.
"""

import atexit
import logging

import torch.distributed as dist

logger = logging.getLogger(__name__)


def destroy_process_group_at_exit() -> None:
    if dist.is_available() and dist.is_initialized():
        logger.debug("Destroying the process group before the interpreter shuts down.")
        dist.destroy_process_group()


_installed = False


def install() -> None:
    """Registers `destroy_process_group_at_exit` to run at interpreter exit (once)."""
    global _installed
    if not _installed:
        atexit.register(destroy_process_group_at_exit)
        _installed = True
