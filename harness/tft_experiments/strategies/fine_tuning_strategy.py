"""
The base of the fine-tuning strategies of an experiment grid (`ExperimentSpec.strategies`), and
how a strategy's generated config is written: one call of a function of `training_configs/
common/`, whose arguments are JSON values or configs of `training_configs/` (`ConfigImport`).
"""

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, Optional, Sequence

from allennlp.common import Registrable

from tft_allennlp import CONFIGS_ROOT


@dataclass(frozen=True)
class ConfigImport:
    """A config of `training_configs/` (`path`, relative to it) as an argument of a call."""

    path: str

    def __str__(self) -> str:
        return f"import '{os.path.join(CONFIGS_ROOT, self.path)}'"


def glue_config(task: str) -> ConfigImport:
    """The cross-encoder config of a GLUE task, `training_configs/glue/<task>.jsonnet`."""
    return ConfigImport(f"glue/{task}.jsonnet")


@dataclass(frozen=True)
class JsonnetCall:
    """
    `library(*arguments, **keywords)`, the function of `training_configs/common/<library>.
    libsonnet` called with JSON values and `ConfigImport`s: the whole of a generated config.
    """

    library: str
    arguments: Sequence[Any] = ()
    keywords: Optional[Dict[str, Any]] = None

    def text(self, comment: str) -> str:
        path = os.path.join(CONFIGS_ROOT, "common", f"{self.library}.libsonnet")
        return (
            f"// {comment}\n"
            f"local {self.library} = import '{path}';\n"
            f"{self.library}({self._given()})\n"
        )

    def expression(self) -> str:
        """The call as one jsonnet expression, also an argument of another call."""
        path = os.path.join(CONFIGS_ROOT, "common", f"{self.library}.libsonnet")
        return f"(import '{path}')({self._given()})"

    def _given(self) -> str:
        given = [*map(_argument, self.arguments)]
        given += [f"{name}={_argument(value)}" for name, value in (self.keywords or {}).items()]
        return ", ".join(given)

    def replacing(self, old: Any, new: Any) -> "JsonnetCall":
        """The same call with the argument `old` replaced by `new` (a task's own config)."""
        keywords = {k: new if v == old else v for k, v in (self.keywords or {}).items()}
        return JsonnetCall(self.library, [new if a == old else a for a in self.arguments], keywords)


def _argument(value: Any) -> str:
    if isinstance(value, JsonnetCall):
        return value.expression()
    return str(value) if isinstance(value, ConfigImport) else json.dumps(value)


class FineTuningStrategy(Registrable):
    """
    How an experiment grid fine-tunes a GLUE task: which tasks it applies to, the config a run
    trains (by default the task's own cross-encoder config, `training_configs/glue/<task>.
    jsonnet`; otherwise a generated call of a function of `training_configs/common/`), and the
    overrides it sets besides the grid's. Registered by the name a spec's `strategies` gives
    (`cross`, `siamese_softmax`, ...); one file of `tft_experiments/strategies/` per strategy.
    """

    trains_all_tasks = False
    """Whether one run trains all the grid's tasks at once (reported once per task)."""
    own_directory_level = True
    """Whether its runs' directories have a level of the strategy's name after the recipe's."""

    def applies_to(self, task: str) -> bool:
        """Whether it fine-tunes `task`; the grid skips the tasks where it does not."""
        return True

    def config(self, tasks: Sequence[str]) -> Optional[JsonnetCall]:
        """
        The generated config of a run on `tasks` (one task, or all the grid's where it
        `trains_all_tasks`); None: the task's own config, `glue/<task>.jsonnet`.
        """
        return None

    def overrides(self) -> Dict[str, Any]:
        """Its own overrides of every run, which win over the recipe's."""
        return {}

    def run_overrides(self, overrides: Dict[str, Any], tasks: Sequence[str]) -> Dict[str, Any]:
        """A single-task GLUE config's overrides as overrides of its config."""
        return overrides
