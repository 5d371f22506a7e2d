"""
A trainer callback for the tests of the run's lock: it holds the run at its start (its
`config.json`, `meta.json`, `out.log` and vocabulary written, nothing trained: what an earlier
version took for the leftovers of a failed start) until the file `release` exists, having
written the file `holding` (outside the run) to say it is there.
"""

import os
import time

from allennlp.training.callbacks.callback import TrainerCallback


@TrainerCallback.register("test_hold")
class HoldCallback(TrainerCallback):
    def __init__(
        self, serialization_dir: str, release: str, holding: str, timeout: float = 60.0
    ) -> None:
        super().__init__(serialization_dir)
        self._release = release
        self._holding = holding
        self._timeout = timeout

    def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
        open(self._holding, "w").close()
        deadline = time.monotonic() + self._timeout
        while not os.path.exists(self._release) and time.monotonic() < deadline:
            time.sleep(0.02)
