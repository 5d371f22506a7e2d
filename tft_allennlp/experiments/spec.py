"""
The experiment grid of `allennlp tft-experiment SPEC`: base checkpoints x injection variants x
GLUE tasks x training sizes x seeds x fine-tuning recipes, read from a JSON or jsonnet file and
expanded into runs that each own a directory.

A recipe is a named set of GLUE config overrides. Besides the fixed ones (`recipes`, e.g. the
paper's), a spec may ask for a small sweep (`sweep`): every candidate recipe is tried on the base
model without injection, the best on dev becomes the `tuned` recipe of that base, task and
training size, and every variant of the base is then fine-tuned with it unchanged.

The spec only describes: it never reads the disk. Which candidate the sweep chose is found from
the finished runs (`outcomes.tuned_choices`) and handed to `glue_runs`.
"""

import itertools
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

from allennlp.common import Params
from allennlp.common.checks import ConfigurationError

from tft_allennlp.common.glue_tasks import get_glue_task

# The configs ship inside the package (the repository's top-level `training_configs` is a link
# to them), so an installed wheel finds them too.
CONFIGS_ROOT = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "training_configs"
)

# Injection variants: the paper's names (Tables 3-5) -> config in training_configs/injection/;
# "none" fine-tunes the base checkpoint itself.
VARIANTS: Dict[str, Optional[str]] = {
    "none": None,
    "tft": "tft",
    "tft_simple": "tft_simple",
    "+sentence": "sentence_only",
    "+3way-PP": "three_way_pp",
    "+binary-PP": "binary_pp",
}


# The recipe label of the runs that use the sweep's choice.
TUNED = "tuned"

TunedKey = Tuple[str, str, Optional[int]]
"""(base, task, train_size): what a tuned recipe is chosen for."""


def size_name(train_size: Optional[int]) -> str:
    """ "all" for the whole training file, else the number of examples."""
    return "all" if train_size is None else str(train_size)


def sweep_point_name(point: Dict[str, Any]) -> str:
    """`{"trainer.optimizer.lr": 1e-4, "trainer.num_epochs": 2}` -> `lr0.0001_epochs2`."""

    def text(value: Any) -> str:
        return f"{value:g}" if isinstance(value, (int, float)) else str(value)

    return "_".join(
        f"{key.split('.')[-1].replace('num_', '')}{text(value)}" for key, value in point.items()
    )


def selection_metric(task: str) -> str:
    """The dev score the sweep maximises: the mean of the task's metrics, or its only one."""
    metrics = get_glue_task(task).metrics
    return "combined_score" if len(metrics) > 1 else metrics[0]


@dataclass(frozen=True)
class InjectionRun:
    """Injects one variant into one base checkpoint and exports the encoder."""

    base: str
    variant: str
    directory: str

    @property
    def config(self) -> str:
        return os.path.join(CONFIGS_ROOT, "injection", f"{VARIANTS[self.variant]}.jsonnet")

    @property
    def encoder(self) -> str:
        return os.path.join(self.directory, "encoder")


@dataclass(frozen=True)
class GlueRun:
    """
    Fine-tunes one encoder on one GLUE task, training size and seed with the overrides of
    `candidate`; `recipe` is the label it is reported under (`candidate` itself, or "tuned").
    """

    base: str
    variant: str
    recipe: str
    candidate: str
    task: str
    train_size: Optional[int]
    seed: int
    directory: str

    @property
    def config(self) -> str:
        return os.path.join(CONFIGS_ROOT, "glue", f"{self.task}.jsonnet")

    @property
    def size_name(self) -> str:
        return size_name(self.train_size)


@dataclass
class ExperimentSpec:
    """
    # Parameters

    output_dir : `str`
        Where every run, the CSV, the table and the plots go.
    base_models : `Dict[str, str]`
        Short name -> hub name or local checkpoint directory.
    tasks : `List[str]`
        GLUE task names (`mrpc`, `stsb`, ...).
    glue_dir : `str`
        The official GLUE layout, `$glue_dir/MRPC/train.tsv`, ...
    variants : `List[str]`, optional (default = `["none", "tft"]`)
        Keys of `VARIANTS`; every variant but "none" needs `paraphrase_corpus`.
    train_sizes : `List[Optional[int]]`, optional (default = `[null]`)
        Training examples per run; `null` is the whole training file.
    seeds : `List[int]`, optional (default = `[1]`)
        Seeds of the fine-tuning runs (random, numpy and torch seeds, and the subsample).
    recipes : `Dict[str, Dict[str, Any]]`, optional (default = `{"paper": {}}`)
        Name -> overrides of the GLUE config; every variant of a base gets the same recipes.
    sweep : `Dict[str, List[Any]]`, optional (default = `{}`)
        GLUE config key -> values to try, e.g. `{"trainer.optimizer.lr": [1e-4, 2e-4]}`. Every
        combination, and every recipe of `recipes`, is a candidate: each is run on the base
        model without injection for `sweep_seeds`, the one with the best mean dev score (the
        task's `combined_score`, or its only metric) becomes recipe "tuned" for that base, task
        and training size, and all variants then run with it. Empty: no tuned recipe.
    sweep_seeds : `List[int]`, optional (default = the first of `seeds`)
    glue_overrides : `Dict[str, Any]`, optional
        Overrides for every GLUE run (e.g. `{"trainer.num_epochs": 2}` to save CPU time).
    paraphrase_corpus : `str`, optional
        The aligned corpus (JSON lines) that injection reads.
    injection_overrides : `Dict[str, Any]`, optional
        Overrides for every injection run.
    injection_seed : `int`, optional (default = `1`)
    metric_epoch : `str`, optional (default = `"last"`)
        `"last"` reports the dev metrics after the last epoch; `"best"` those of the epoch that
        was best on dev (`best_validation_*`).
    retries : `int`, optional (default = `1`)
        How often a failed run is tried again before it is reported as failed.
    keep_weights : `bool`, optional (default = `True`)
        False deletes a finished GLUE run's weights (`*.th`, `model.tar.gz`) and keeps its
        config, metrics and log: a large grid then fits on a small disk.
    """

    output_dir: str
    base_models: Dict[str, str]
    tasks: List[str]
    glue_dir: str
    variants: List[str] = field(default_factory=lambda: ["none", "tft"])
    train_sizes: List[Optional[int]] = field(default_factory=lambda: [None])
    seeds: List[int] = field(default_factory=lambda: [1])
    recipes: Dict[str, Dict[str, Any]] = field(default_factory=lambda: {"paper": {}})
    sweep: Dict[str, List[Any]] = field(default_factory=dict)
    sweep_seeds: Optional[List[int]] = None
    glue_overrides: Dict[str, Any] = field(default_factory=dict)
    paraphrase_corpus: Optional[str] = None
    injection_overrides: Dict[str, Any] = field(default_factory=dict)
    injection_seed: int = 1
    metric_epoch: str = "last"
    retries: int = 1
    keep_weights: bool = True

    def __post_init__(self) -> None:
        for task in self.tasks:
            get_glue_task(task)
        unknown = [variant for variant in self.variants if variant not in VARIANTS]
        if unknown:
            raise ConfigurationError(f"Unknown variants {unknown}; choose from {list(VARIANTS)}.")
        if any(VARIANTS[v] for v in self.variants) and not self.paraphrase_corpus:
            raise ConfigurationError("Injection variants need 'paraphrase_corpus'.")
        if self.metric_epoch not in ("last", "best"):
            raise ConfigurationError("metric_epoch is 'last' or 'best'.")
        if not self.base_models or not self.seeds or not self.recipes or not self.train_sizes:
            raise ConfigurationError(
                "base_models, seeds, recipes and train_sizes must not be empty."
            )
        if any(not isinstance(values, list) or not values for values in self.sweep.values()):
            raise ConfigurationError("Every sweep key needs a non-empty list of values.")
        clashes = set(self.recipes) & ({TUNED} | set(self.sweep_points()))
        if clashes:
            raise ConfigurationError(f"Recipe names {sorted(clashes)} are taken by the sweep.")
        if self.sweep_seeds is None:
            self.sweep_seeds = self.seeds[:1]

    @classmethod
    def from_file(cls, path: str, output_dir: Optional[str] = None) -> "ExperimentSpec":
        """Reads a JSON or jsonnet spec; `output_dir` overrides the spec's."""
        values = Params.from_file(path).as_dict(quiet=True)
        if output_dir is not None:
            values["output_dir"] = output_dir
        try:
            return cls(**values)
        except TypeError as error:
            raise ConfigurationError(f"{path}: {error}") from None

    def injection_runs(self) -> Iterator[InjectionRun]:
        for base, variant in itertools.product(self.base_models, self.variants):
            if VARIANTS[variant] is not None:
                yield self._injection(base, variant)

    def _injection(self, base: str, variant: str) -> InjectionRun:
        return InjectionRun(
            base, variant, os.path.join(self.output_dir, "injection", base, variant)
        )

    def sweep_points(self) -> Dict[str, Dict[str, Any]]:
        """The sweep's combinations by name, e.g. `lr0.0001_epochs2`."""
        keys = list(self.sweep)
        points = (
            [dict(zip(keys, values)) for values in itertools.product(*self.sweep.values())]
            if keys
            else []
        )
        return {sweep_point_name(point): point for point in points}

    def candidates(self) -> Dict[str, Dict[str, Any]]:
        """Every recipe a run can use: the fixed ones, then the sweep's points."""
        return {**self.recipes, **self.sweep_points()}

    def _run(
        self,
        base: str,
        variant: str,
        recipe: str,
        candidate: str,
        task: str,
        size: Optional[int],
        seed: int,
    ) -> GlueRun:
        directory = os.path.join(
            self.output_dir,
            "glue",
            base,
            variant,
            candidate,
            task,
            f"n{size_name(size)}",
            f"seed{seed}",
        )
        return GlueRun(base, variant, recipe, candidate, task, size, seed, directory)

    def sweep_runs(self) -> Iterator[GlueRun]:
        """The base models without injection under every candidate recipe (none without a sweep)."""
        if not self.sweep:
            return
        grid = itertools.product(
            self.sweep_seeds, self.tasks, self.train_sizes, self.base_models, self.candidates()
        )
        for seed, task, size, base, candidate in grid:
            yield self._run(base, "none", candidate, candidate, task, size, seed)

    def tuned_keys(self) -> List[TunedKey]:
        """The (base, task, train_size) that each get a tuned recipe from the sweep."""
        if not self.sweep:
            return []
        return list(itertools.product(self.base_models, self.tasks, self.train_sizes))

    def glue_runs(self, choices: Optional[Mapping[TunedKey, str]] = None) -> Iterator[GlueRun]:
        """
        Every reported run, seed by seed so that a partial grid is balanced: the tuned recipe
        first, for the (base, task, train_size) whose candidate `choices` gives, then the fixed
        recipes.
        """
        choices = choices or {}
        recipes = ([TUNED] if self.sweep else []) + list(self.recipes)
        grid = itertools.product(
            recipes, self.seeds, self.tasks, self.train_sizes, self.base_models, self.variants
        )
        for recipe, seed, task, size, base, variant in grid:
            candidate = choices.get((base, task, size)) if recipe == TUNED else recipe
            if candidate is not None:
                yield self._run(base, variant, recipe, candidate, task, size, seed)

    def injection_of(self, run: GlueRun) -> Optional[InjectionRun]:
        """The injection whose encoder `run` fine-tunes (None for the base model itself)."""
        return None if VARIANTS[run.variant] is None else self._injection(run.base, run.variant)

    def sweep_runs_of(self, key: TunedKey) -> List[GlueRun]:
        """The sweep runs that choose the tuned recipe of (base, task, train_size)."""
        return [run for run in self.sweep_runs() if (run.base, run.task, run.train_size) == key]

    def dumps(self) -> str:
        return json.dumps(self.__dict__, indent=2)
