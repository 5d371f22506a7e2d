"""
How an experiment spec expands into runs (`runs.py`): the injections of its variants, the recipe
sweep on the base models, and the reported grid, each run with its own directory, config and
overrides. `ExperimentSpec` (`spec.py`) describes the grid and checks it; this expansion reads its
fields only, and never the disk (which candidate the sweep chose is handed to `glue_runs`).
"""

import itertools
import json
import os
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

from tft_allennlp.common.glue_tasks import get_glue_task
from tft_experiments.runs import (
    GlueRun,
    InjectionRun,
    seed_overrides,
    size_name,
)
from tft_experiments.strategies import FineTuningStrategy
from tft_experiments.strategies.cross import CROSS
from tft_experiments.strategies.fine_tuning_strategy import (
    CONFIGS_ROOT,
    JsonnetCall,
    glue_config,
)
from tft_experiments.variants import VARIANTS, Variant

# The recipe label of the runs that use the sweep's choice.
TUNED = "tuned"

TunedKey = Tuple[str, str, str, str, Optional[int]]
"""
(base, variant, strategy, task, train_size): what a tuned recipe is chosen for; the variant and
strategy are "none" and `cross` for every run of a base unless the spec sweeps each variant
(`sweep_variants`).
"""


def sweep_point_name(point: Dict[str, Any]) -> str:
    """`{"trainer.optimizer.lr": 1e-4, "trainer.num_epochs": 2}` -> `lr0.0001_epochs2`."""

    def text(value: Any) -> str:
        return f"{value:g}" if isinstance(value, (int, float)) else str(value)

    return "_".join(
        f"{key.split('.')[-1].replace('num_', '')}{text(value)}" for key, value in point.items()
    )


def strategy_named(name: str) -> FineTuningStrategy:
    """The registered fine-tuning strategy `name`."""
    return FineTuningStrategy.by_name(name)()


class RunExpansion:
    """
    The runs of a spec, as methods of `ExperimentSpec` (which inherits them): its injections
    (`injection_runs`), its sweep (`sweep_runs`, `tuned_keys`) and its reported grid
    (`glue_runs`). The fields below are the spec's (see `ExperimentSpec` for their meaning).
    """

    output_dir: str
    base_models: Dict[str, str]
    tasks: List[str]
    glue_dir: str
    custom_tasks: Dict[str, Dict[str, Any]]
    variants: List[str]
    base_variants: Dict[str, List[str]]
    custom_variants: Dict[str, Dict[str, Any]]
    train_sizes: List[Optional[int]]
    seeds: List[int]
    recipes: Dict[str, Dict[str, Any]]
    sweep: Dict[str, List[Any]]
    sweep_seeds: Optional[List[int]]
    sweep_variants: bool
    sweep_held_out_fraction: Optional[float]
    run_fixed_recipes: bool
    glue_overrides: Dict[str, Any]
    paraphrase_corpus: Optional[str]
    injection_overrides: Dict[str, Any]
    injection_seed: int
    injection_seeds: Optional[List[int]]
    strategies: List[str]
    strategy_overrides: Dict[str, Dict[str, Any]]

    def _sweep_seeds(self) -> List[int]:
        return self.seeds[:1] if self.sweep_seeds is None else self.sweep_seeds

    def _injection_seeds(self) -> List[int]:
        return [self.injection_seed] if self.injection_seeds is None else self.injection_seeds

    # Variants and their injections.

    def _config_name(self, name: str) -> Optional[str]:
        """The injection config of the variant `name` (also a custom one); None: "none"."""
        if name in self.custom_variants:
            return VARIANTS[self.custom_variants[name]["variant"]]
        return VARIANTS.get(name)

    def _corpus(self, name: str) -> Optional[str]:
        """The aligned corpus the variant `name` is injected from."""
        return self.custom_variants.get(name, {}).get("paraphrase_corpus", self.paraphrase_corpus)

    def _variants(self, base: str) -> List[Variant]:
        """The variants of `base`, then each injected one with the other injection seeds."""
        names = self.base_variants.get(base, self.variants)
        seeded = [
            Variant(name, seed)
            for seed in self._injection_seeds()[1:]
            for name in names
            if self._config_name(name) is not None
        ]
        return [Variant(name) for name in names] + seeded

    def all_variants(self, base: str) -> List[str]:
        """The labels of the variants of `base` (`tft`, `tft_iseed2`, ...), in grid order."""
        return [variant.label for variant in self._variants(base)]

    def _injection(self, base: str, variant: Variant) -> Optional[InjectionRun]:
        """The injection of `variant` into `base`; None for "none", which is not injected."""
        config_name = self._config_name(variant.name)
        if config_name is None:
            return None
        custom = self.custom_variants.get(variant.name, {})
        overrides = {**self.injection_overrides, **custom.get("injection_overrides", {})}
        seed = variant.injection_seed
        return InjectionRun(
            base,
            variant.label,
            os.path.join(self.output_dir, "injection", base, variant.label),
            self._injection_seeds()[0] if seed is None else seed,
            os.path.join(CONFIGS_ROOT, "injection", f"{config_name}.jsonnet"),
            self._corpus(variant.name),
            json.dumps(overrides, sort_keys=True),
            self.base_models[base],
        )

    def injection_runs(self) -> Iterator[InjectionRun]:
        for base in self.base_models:
            for variant in self._variants(base):
                injection = self._injection(base, variant)
                if injection is not None:
                    yield injection

    def injection_of(self, run: GlueRun) -> Optional[InjectionRun]:
        """The injection whose encoder `run` fine-tunes (None for the base model itself)."""
        return run.injection

    # Recipes and the sweep.

    def sweep_points(self) -> Dict[str, Dict[str, Any]]:
        """The sweep's combinations by name, e.g. `lr0.0001_epochs2`."""
        keys = list(self.sweep)
        points = [dict(zip(keys, values)) for values in itertools.product(*self.sweep.values())]
        return {sweep_point_name(point): point for point in points} if keys else {}

    def candidates(self) -> Dict[str, Dict[str, Any]]:
        """Every recipe a run can use: the fixed ones, then the sweep's points."""
        return {**self.recipes, **self.sweep_points()}

    def sweep_runs(self) -> Iterator[GlueRun]:
        """
        The runs that choose the tuned recipes, each candidate recipe for `sweep_seeds`: of the
        base models without injection, or with `sweep_variants` of every variant and strategy
        (none without a sweep). With `sweep_held_out_fraction` they validate on a part carved
        out of their training data, in `sweep/`.
        """
        if not self.sweep:
            return
        grid = itertools.product(
            self._sweep_seeds(), self.tasks, self.train_sizes, self.base_models, self.candidates()
        )
        for seed, task, size, base, candidate in grid:
            swept = self._variants(base) if self.sweep_variants else [Variant("none")]
            strategies = self.strategies if self.sweep_variants else [CROSS]
            for variant, name in itertools.product(swept, strategies):
                if strategy_named(name).applies_to(task):
                    yield self._run(
                        base, variant, candidate, candidate, task, size, seed, name, sweep=True
                    )

    def tuned_key(self, base: str, variant: str, strategy: str, task: str, size: Any) -> TunedKey:
        """The key of the tuned recipe that a run of these coordinates takes."""
        if not self.sweep_variants:
            variant, strategy = "none", CROSS
        return (base, variant, strategy, task, size)

    def tuned_keys(self) -> List[TunedKey]:
        """The keys that each get a tuned recipe from the sweep, in the sweep's order."""
        keys = (self._key_of(run) for run in self.sweep_runs())
        return list(dict.fromkeys(keys))

    def _key_of(self, run: GlueRun) -> TunedKey:
        return self.tuned_key(run.base, run.variant, run.strategy, run.task, run.train_size)

    def sweep_runs_of(self, key: TunedKey) -> List[GlueRun]:
        """The sweep runs that choose the tuned recipe of `key`."""
        return [run for run in self.sweep_runs() if self._key_of(run) == key]

    # The reported grid.

    def glue_runs(self, choices: Optional[Mapping[TunedKey, str]] = None) -> Iterator[GlueRun]:
        """
        Every reported run, seed by seed so that a partial grid is balanced: the tuned recipe
        first, for the (base, task, train_size) whose candidate `choices` gives, then the fixed
        recipes; each strategy that applies to the task. A multitask run is listed once per
        task, with the candidate chosen for that task: where the tasks' choices differ, each
        candidate is a run of its own (reported for the tasks that chose it).
        """
        choices = choices or {}
        fixed = list(self.recipes) if self.run_fixed_recipes else []
        recipes = ([TUNED] if self.sweep else []) + fixed
        grid = itertools.product(
            recipes, self.seeds, self.tasks, self.train_sizes, self.base_models
        )
        for recipe, seed, task, size, base in grid:
            for variant, name in itertools.product(self._variants(base), self.strategies):
                if not strategy_named(name).applies_to(task):
                    continue
                key = self.tuned_key(base, variant.label, name, task, size)
                candidate = choices.get(key) if recipe == TUNED else recipe
                if candidate is not None:
                    yield self._run(base, variant, recipe, candidate, task, size, seed, name)

    def _run(
        self,
        base: str,
        variant: Variant,
        recipe: str,
        candidate: str,
        task: str,
        size: Optional[int],
        seed: int,
        strategy_name: str,
        sweep: bool = False,
    ) -> GlueRun:
        """
        Directories: `glue/<base>/<variant>/<candidate>/<task>/n<size>/seed<k>` for `cross`
        (as before strategies existed); other strategies add a level after the candidate,
        `.../<candidate>/<strategy>/<task>/...`, where a multitask run's task is its tasks
        joined by "+" (`sst2+mrpc+stsb`). A generated config goes to
        `configs/<strategy>_<task>.jsonnet`. A `sweep` run validating on a held-out part of the
        training data (`sweep_held_out_fraction`) goes to `sweep/` instead of `glue/`.
        """
        held_out = self.sweep_held_out_fraction if sweep else None
        strategy = strategy_named(strategy_name)
        tasks = tuple(self.tasks) if strategy.trains_all_tasks else (task,)
        name = "+".join(tasks)
        level = [strategy_name] if strategy.own_directory_level else []
        size_level, seed_level = f"n{size_name(size)}", f"seed{seed}"
        directory = os.path.join(
            self.output_dir,
            "glue" if held_out is None else "sweep",
            base,
            variant.label,
            candidate,
            *level,
            name,
            size_level,
            seed_level,
        )
        config = os.path.join(CONFIGS_ROOT, "glue", f"{task}.jsonnet")
        call, config_text = strategy.config(tasks), None
        custom = self.custom_tasks.get(task)
        if custom is not None:
            # The task's own config: the recipe of common/task.libsonnet on its description.
            own = JsonnetCall("task", keywords={**custom, "task": {"name": task, **custom["task"]}})
            call = own if call is None else call.replacing(glue_config(task), own)
        if call is not None:
            config = os.path.join(self.output_dir, "configs", f"{strategy_name}_{name}.jsonnet")
            subject = f"strategy {strategy_name}" + (
                "" if strategy.trains_all_tasks else f" on {task}"
            )
            config_text = call.text(f"Generated by `allennlp tft-experiment`: {subject}.")
        injection = self._injection(base, variant)
        model = self.base_models[base] if injection is None else injection.encoder
        overrides = self._overrides(strategy_name, candidate, size, seed, tasks)
        if held_out is not None:
            overrides.update(self._held_out_overrides(task, size, seed, held_out))
        return GlueRun(
            base,
            variant.label,
            recipe,
            candidate,
            task,
            size,
            seed,
            directory,
            strategy_name,
            tasks,
            config,
            config_text,
            strategy.trains_all_tasks,
            injection,
            model,
            self.glue_dir,
            json.dumps(overrides),
        )

    def _held_out_overrides(
        self, task: str, size: Optional[int], seed: int, fraction: float
    ) -> Dict[str, Any]:
        """
        Validation on `fraction` of the training data, carved out of what the run trains on:
        the validation reader reads the training file with the training reader's sample and
        keeps the part that the training reader leaves out (the `tft_glue` reader's
        `held_out_fraction`).
        """
        return {
            "dataset_reader.held_out_fraction": fraction,
            "validation_dataset_reader.held_out_fraction": fraction,
            "validation_dataset_reader.held_out": True,
            "validation_dataset_reader.train_size": size,
            "validation_dataset_reader.seed": seed,
            "validation_data_path": self._train_path(task),
        }

    def _train_path(self, task: str) -> str:
        """The training file of `task`, as its config names it."""
        if task in self.custom_tasks:
            return self.custom_tasks[task]["train_data_path"]
        if self.glue_dir.startswith("hf:"):
            return f"{self.glue_dir}:{task}:train"
        return f"{self.glue_dir}/{get_glue_task(task).directory}/train.tsv"

    def _overrides(
        self,
        strategy_name: str,
        candidate: str,
        size: Optional[int],
        seed: int,
        tasks: Tuple[str, ...],
    ) -> Dict[str, Any]:
        """
        A fine-tuning's overrides, each winning over those before it: its subsample, the
        grid's `glue_overrides`, the recipe's, the strategy's own and the grid's for the
        strategy (`strategy_overrides`); as overrides of the strategy's config, and the seeds.
        """
        strategy = strategy_named(strategy_name)
        overrides: Dict[str, Any] = {"dataset_reader.seed": seed, "dataset_reader.train_size": size}
        overrides.update(self.glue_overrides)
        overrides.update(self.candidates()[candidate])
        overrides.update(strategy.overrides())
        overrides.update(self.strategy_overrides.get(strategy_name, {}))
        return {**seed_overrides(seed), **strategy.run_overrides(overrides, tasks)}
