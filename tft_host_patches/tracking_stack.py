"""
What AllenNLP 2.10.1's `wandb` trainer callback (written against wandb 0.10-0.12) needs of
today's wandb (the lock's 0.31), put in place when `allennlp.training.callbacks.wandb` runs
(`import_hooks`), so that nothing here imports wandb early. The versions, the gap, how to remove:

**`wandb.util.generate_id`** (moved to `wandb.sdk.lib.runid` and gone from `wandb.util` by
0.31): the callback's `on_start` calls it for the run's id, so every run with the callback ended
in an `AttributeError` as training started. The callback's `on_start` now gives the run its id
from `wandb.sdk.lib.runid` first (a recovered run keeps the id its checkpoint holds), and
`wandb.init` no longer gets `anonymous="allow"`, a setting wandb has deprecated and ignores
(it warned on every run). Remove when AllenNLP's callback stops calling `wandb.util.generate_id`
(`tests/training/callbacks/wandb_test.py`).
"""

import types
from typing import Any

from tft_host_patches import import_hooks, previous, replace

PATCH = "tracking_stack"


def install() -> None:
    """Registers the mend to run when AllenNLP's W&B callback module is imported."""
    import_hooks.after_import("allennlp.training.callbacks.wandb", _run_id)


def _run_id(module: types.ModuleType) -> None:
    callback = module.WandBCallback

    def on_start(self: Any, trainer: Any, is_primary: bool = True, **kwargs: Any) -> None:
        if is_primary:
            from wandb.sdk.lib.runid import generate_id

            if self._run_id is None:
                self._run_id = generate_id()
            self._wandb_kwargs.pop("anonymous", None)
        previous(callback, "on_start", PATCH)(self, trainer, is_primary=is_primary, **kwargs)

    replace(callback, "on_start", on_start, patch=PATCH)
