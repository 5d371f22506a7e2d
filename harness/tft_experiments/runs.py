"""
The runs of an experiment grid as data: what each trains (config, overrides, environment of its
`allennlp train`) and where (its directory). The spec builds them; the runner trains them.

A run's `fingerprint` stands for what it trains, not where nor under which labels it is
reported: two specs that give one run directory the same fingerprint train the same run there
(`changes.py`).
"""

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple, Union

Training = Tuple[str, Dict[str, Any], Dict[str, str]]
"""What a run trains: its config file, its overrides, the environment of its `allennlp train`."""


def seed_overrides(seed: int) -> Dict[str, int]:
    return {"random_seed": seed, "numpy_seed": seed, "pytorch_seed": seed}


def fingerprint_of(description: Dict[str, Any]) -> str:
    """The SHA-256 of a run's description (JSON, its keys sorted)."""
    return hashlib.sha256(json.dumps(description, sort_keys=True).encode()).hexdigest()


def size_name(train_size: Optional[int]) -> str:
    """ "all" for the whole training file, else the number of examples."""
    return "all" if train_size is None else str(train_size)


@dataclass(frozen=True)
class InjectionRun:
    """
    Injects one variant (`variant`, its label) into one base checkpoint (`model`) and exports
    the encoder: the injection config `config`, the aligned corpus `corpus`, the seed `seed` and
    the variant's own overrides (`overrides`, JSON).
    """

    base: str
    variant: str
    directory: str
    seed: int = 1
    config: str = ""
    corpus: Optional[str] = None
    overrides: str = "{}"
    model: str = ""

    @property
    def encoder(self) -> str:
        return os.path.join(self.directory, "encoder")

    def training(self) -> Training:
        overrides = {**seed_overrides(self.seed), **json.loads(self.overrides)}
        environment = {"TFT_MODEL": self.model, "TFT_PARAPHRASE_CORPUS": self.corpus or ""}
        return self.config, overrides, environment

    @property
    def fingerprint(self) -> str:
        """Of its config, overrides (seed included) and environment."""
        config, overrides, environment = self.training()
        return fingerprint_of(
            {"config": config, "overrides": overrides, "environment": environment}
        )


@dataclass(frozen=True)
class GlueRun:
    """
    Fine-tunes one checkpoint (`model`: the base's, or the encoder of `injection`) on one GLUE
    task, training size and seed with the overrides of `candidate` and the strategy `strategy`;
    `recipe` is the label it is reported under (`candidate` itself, or "tuned"). A multitask
    run (`is_multitask`) trains all of `tasks` and is reported as one `GlueRun` per task, all
    with the same directory; `task` is the one reported. `config` is the config file; where
    `config_text` is given, the runner writes it there first (a strategy's generated config,
    under `OUTPUT_DIR/configs/`). `overrides` (JSON) are all of the run's.
    """

    base: str
    variant: str
    recipe: str
    candidate: str
    task: str
    train_size: Optional[int]
    seed: int
    directory: str
    strategy: str
    tasks: Tuple[str, ...]
    config: str
    config_text: Optional[str] = None
    is_multitask: bool = False
    injection: Optional[InjectionRun] = None
    model: str = ""
    glue_dir: str = ""
    overrides: str = "{}"

    @property
    def size_name(self) -> str:
        return size_name(self.train_size)

    def training(self) -> Training:
        environment = {"TFT_MODEL": self.model, "GLUE_DIR": self.glue_dir}
        return self.config, json.loads(self.overrides), environment

    @property
    def fingerprint(self) -> str:
        """
        Of its config (and the text generated into it), overrides, environment and tasks, and
        of the injection whose encoder it fine-tunes.
        """
        config, overrides, environment = self.training()
        injection = None if self.injection is None else self.injection.fingerprint
        return fingerprint_of(
            {
                "config": config,
                "config_text": self.config_text,
                "overrides": overrides,
                "environment": environment,
                "tasks": list(self.tasks),
                "injection": injection,
            }
        )


Run = Union[InjectionRun, GlueRun]


def grid_of(run: Run) -> Tuple[str, str]:
    """
    The output directory of the grid that holds `run` and the run's directory relative to it
    (with "/"), from the layout `ExperimentSpec` gives runs: `injection/<base>/<variant>` and
    `glue/<base>/<variant>/<candidate>/...` (or `sweep/...`, a sweep run validating on held-out
    training data; the last such place in its path).
    """
    if isinstance(run, InjectionRun):
        heads = [["injection", run.base, run.variant]]
    else:
        heads = [[kind, run.base, run.variant, run.candidate] for kind in ("glue", "sweep")]
    parts = os.path.normpath(run.directory).split(os.sep)
    for start in range(len(parts) - len(heads[0]), -1, -1):
        if any(parts[start : start + len(head)] == head for head in heads):
            return os.sep.join(parts[:start]) or ".", "/".join(parts[start:])
    raise ValueError(f"{run.directory}: not the directory of a {heads[0][0]} run of a grid")
