"""
The `allennlp` command's exit without collecting garbage over everything it imported. When
Python exits, it clears each module and runs the garbage collector over every object still
tracked, several times; after transformers 5's model code (3,800 modules, ~450,000 objects)
that costs 2-3 s once `allennlp predict` has printed its prediction (against 0.5 s when the
objects are frozen first). So, once the exit handlers registered after `allennlp.commands`
(AllenNLP's archive clean-up, the run's own) have run, the objects alive are frozen
(`gc.freeze()`): the collections at exit pass over them. The handlers registered before it
(logging's shutdown, which flushes and closes the log files; `weakref.finalize`'s, which removes
temporary folders; multiprocessing's, which ends worker processes) still run after it, and
nothing is collected sooner or later than before while the command runs.

What it gives up: an object that is only in a reference cycle at exit is not finalized then
(a file opened and never closed, in a cycle, is not flushed); Python does not promise that
finalization either, and the plugin and AllenNLP close what they write.
"""

import atexit
import gc
import types

from tft_host_patches import import_hooks

# The module whose import makes a process the `allennlp` command (or a library user of its
# commands, whose exit is as slow).
COMMAND = "allennlp.commands"


def install() -> None:
    """Freezes the objects alive at exit of any process that imports `COMMAND` (once)."""
    import_hooks.after_import(COMMAND, _register)


_registered = False


def _register(module: types.ModuleType) -> None:
    global _registered
    if not _registered:
        _registered = True
        atexit.register(gc.freeze)
