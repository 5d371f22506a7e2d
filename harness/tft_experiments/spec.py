"""
The experiment grid of `allennlp tft-experiment SPEC`: base checkpoints x injection variants x
GLUE tasks x training sizes x seeds x fine-tuning recipes x fine-tuning strategies, read from a
JSON or jsonnet file and checked here; `expansion.py` expands it into runs (`runs.py`) that each
own a directory.

A recipe is a named set of GLUE config overrides. Besides the fixed ones (`recipes`, e.g. the
paper's), a spec may ask for a small sweep (`sweep`): every candidate recipe is tried on the base
model without injection, the best on dev becomes the `tuned` recipe of that base, task and
training size, and every variant of the base is then fine-tuned with it unchanged.

A strategy says how a GLUE task is fine-tuned: a registered `FineTuningStrategy`
(`tft_experiments/strategies/`), which says which tasks it applies to, the config it trains and its
own overrides. The sweep runs cross-encoders only; its tuned recipe is applied unchanged to
every strategy.

The spec only describes: it never reads the disk, nor changes. Which candidate the sweep chose is
found from the finished runs (`outcomes.tuned_choices`) and handed to `glue_runs`.
"""

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from allennlp.common.checks import ConfigurationError

from tft_allennlp.common.config_keys import dataclass_settings
from tft_allennlp.common.glue_tasks import get_glue_task
from tft_allennlp.common.sentence_tasks import SentenceTask
from tft_experiments.expansion import TUNED, RunExpansion, strategy_named
from tft_experiments.strategies import FineTuningStrategy
from tft_experiments.strategies.cross import CROSS
from tft_experiments.tasks import custom_task, grid_tasks
from tft_experiments.variants import SEEDED, VARIANTS

# The largest seed numpy takes.
MAX_SEED = 2**32 - 1
# The variables that specs read with `std.extVar` besides the plugin's (`CONFIG_DEFAULTS`:
# TFT_MODEL, GLUE_DIR, TFT_PARAPHRASE_CORPUS), with their defaults; the environment wins.
SPEC_DEFAULTS = {
    # The larger base of the claims grids (research/specs/claims_*.jsonnet).
    "TFT_LARGE_MODEL": "sentence-transformers/all-mpnet-base-v2",
    # Where a spec's runs and results go (its output_dir).
    "TFT_EXPERIMENT_DIR": "research/results/experiment",
    # Which part of research/specs/stack_move_cpu.jsonnet runs (`minilm`, `mpnet_mrpc`,
    # `mpnet_stsb`), each into its own folder under TFT_EXPERIMENT_DIR.
    "TFT_STACK_PART": "minilm",
}


@dataclass
class ExperimentSpec(RunExpansion):
    """
    # Parameters

    output_dir : `str`
        Where every run, the CSV, the table and the plots go.
    base_models : `Dict[str, str]`
        Short name -> hub name or local checkpoint directory.
    tasks : `List[str]`
        GLUE task names (`mrpc`, `stsb`, ...) and names of `custom_tasks`.
    custom_tasks : `Dict[str, Dict[str, Any]]`, optional
        Tasks of the user's own, by name: `{"paraphrase": {"task": {...}, "train_data_path":
        "...", "validation_data_path": "..."}}`, `task` being the description a config's
        reader and model take (docs/tasks.md). They run with the recipe of
        `common/task.libsonnet` (GLUE's), under the `cross`, adapter and `smart` strategies
        (the Siamese ones skip them; multitask strategies take GLUE tasks only).
    glue_dir : `str`
        The official GLUE layout, `$glue_dir/MRPC/train.tsv`, ...
    variants : `List[str]`, optional (default = `["none", "tft"]`)
        Keys of `VARIANTS` (`experiments/variants.py`) or of `custom_variants`; every variant but
        "none" needs `paraphrase_corpus` (or its own).
    custom_variants : `Dict[str, Dict[str, Any]]`, optional
        Named injections besides the paper's: `{"tft_old_aligner": {"variant": "tft",
        "paraphrase_corpus": "old.jsonl", "injection_overrides": {...}}}` injects with the
        config of `variant` from its own corpus (default: the spec's) and overrides (added to
        `injection_overrides`), e.g. to compare two aligners' corpora.
    base_variants : `Dict[str, List[str]]`, optional
        Variants for some bases instead of `variants`, e.g. `{"mpnet": ["none"]}` to fine-tune
        a larger model only as it is, as the reference a smaller injected one is compared with.
    reference_base : `str`, optional
        A base whose runs without injection every other base's variants are compared with,
        paired by seed (the same subsample and fine-tuning seed), in the report's paired tables
        and CSV: a small model with injection against a larger one without.
    train_sizes : `List[Optional[int]]`, optional (default = `[null]`)
        Training examples per run, each positive; `null` is the whole training file.
    seeds : `List[int]`, optional (default = `[1]`)
        Seeds of the fine-tuning runs (random, numpy and torch seeds, and the subsample), each
        from 0 to 2**32 - 1 (numpy's range). No list of the grid may be empty or give a value
        twice.
    recipes : `Dict[str, Dict[str, Any]]`, optional (default = `{"paper": {}}`)
        Name -> overrides of the GLUE config; every variant of a base gets the same recipes.
    sweep : `Dict[str, List[Any]]`, optional (default = `{}`)
        GLUE config key -> values to try, e.g. `{"trainer.optimizer.lr": [1e-4, 2e-4]}`. Every
        combination, and every recipe of `recipes`, is a candidate: each is run on the base
        model without injection for `sweep_seeds`, the one with the best mean dev score (the
        task's `combined_score`, or its only metric) becomes recipe "tuned" for that base, task
        and training size, and all variants then run with it. Empty: no tuned recipe.
    sweep_seeds : `List[int]`, optional (default = the first of `seeds`)
    sweep_variants : `bool`, optional (default = `False`)
        True: every variant and strategy of a base is swept on its own, and runs with its own
        choice, instead of taking the choice of the base's cross-encoder without injection: the
        baseline and each injected encoder are tuned alike.
    sweep_held_out_fraction : `float`, optional (default = `None`)
        If given, the sweep's runs validate on this fraction of the training data (after the
        run's `train_size` sample, chosen with its seed), carved out of what they train on,
        instead of the dev set: the recipe is chosen without reading the dev set that the grid
        reports. They run in `sweep/` beside `glue/`. Not with strategies that train several
        tasks at once.
    run_fixed_recipes : `bool`, optional (default = `True`)
        False: the grid runs the tuned recipe alone, and `recipes` are only candidates of the
        sweep (which must then be given). A grid of many strategies or variants so halves its
        CPU time when only the tuned recipe is to be reported.
    glue_overrides : `Dict[str, Any]`, optional
        Overrides for every GLUE run (e.g. `{"trainer.num_epochs": 2}` to save CPU time).
    paraphrase_corpus : `str`, optional
        The aligned corpus (JSON lines) that injection reads.
    injection_overrides : `Dict[str, Any]`, optional
        Overrides for every injection run.
    injection_seed : `int`, optional (default = `1`)
    injection_seeds : `List[int]`, optional (default = `[injection_seed]`)
        Inject every variant with each of these seeds (negatives, shuffling, initialisation of
        the heads): the first keeps the variant's name, the others are reported as variants of
        their own, `tft_iseed2` for `tft` injected with seed 2, fine-tuned alike, so that the
        spread injection seeds add can be told from a difference between variants.
    metric_epoch : `str`, optional (default = `"last"`)
        `"last"` reports the dev metrics after the last epoch; `"best"` those of the epoch that
        was best on dev (`best_validation_*`).
    retries : `int`, optional (default = `1`)
        How often a failed run is tried again before it is reported as failed.
    keep_weights : `bool`, optional (default = `True`)
        False deletes a finished GLUE run's weights (`*.th`, `model.tar.gz`) and keeps its
        config, metrics and log: a large grid then fits on a small disk.
    strategies : `List[str]`, optional (default = `["cross"]`)
        How each task is fine-tuned: the names of registered `FineTuningStrategy`s, one file each
        in `tft_experiments/strategies/`. `cross`, the cross-encoder of `glue/<task>.jsonnet`;
        `siamese_softmax` (pair tasks), `siamese_cosine_mse` (STS-B), `siamese_mnr` and
        `siamese_cosine_embedding` (MRPC, QQP), Sentence-BERT models
        (`common/siamese_of_glue.libsonnet`; a task a strategy does not apply to is skipped for
        it); `multitask_shuffled`, `multitask_sequential`, `multitask_roundrobin`, one run over all
        of `tasks` (`common/multitask.libsonnet` with the schedulers `tft_shuffled`,
        `tft_sequential`, `homogeneous_roundrobin`), reported per task; `adapters_houlsby`,
        `adapters_not_shared`, `adapters_three_shared`, the cross-encoder with Mohebbi & Rajaee's
        bottleneck adapters on a frozen encoder (`common/adapters.libsonnet`, at their lr 3e-4
        whatever the recipe's); `lora`, the cross-encoder with LoRA on a frozen encoder
        (`common/lora.libsonnet`, at lr 5e-4 whatever the recipe's); `smart`, the cross-encoder
        with SMART's adversarial and proximal terms (`common/smart.libsonnet`). Every strategy runs
        for every base, variant, seed and training size (a multitask run subsamples each task's
        training file with the same size and seed) and with the same recipes: the tuned one is the
        base cross-encoder's choice, applied unchanged. `glue_overrides`, recipes and sweep points
        apply to every strategy; in a multitask run, keys under `dataset_reader.` and
        `validation_dataset_reader.` apply to every task's reader, and `data_loader.batch_size`
        (`validation_data_loader.batch_size`) is the scheduler's batch size.
    strategy_overrides : `Dict[str, Dict[str, Any]]`, optional
        Strategy -> overrides of its runs that win over `glue_overrides`, the recipe and the
        strategy's own, e.g. `{"adapters_houlsby": {"trainer.num_epochs": 10}}`: bottleneck
        adapters train a few hundred thousand parameters and need more steps than full
        fine-tuning. A `cross` entry also reaches the sweep, whose runs are cross-encoders.
    reuse_from : `List[str]`, optional (default = `[]`)
        Output directories of other grids whose finished runs this grid takes instead of
        running them again (`reuse.py`, from their tables of finished runs): the same run
        directory, finished there with the config this grid would train (the same config
        fingerprint, a path inside either grid read relative to it). Fine-tunings of an
        injected encoder come only from a grid that fine-tuned the same encoder (the same
        recorded fingerprint; without records, the same origin). The first grid that has a run
        wins; a reused run gets that grid's row, naming it in `reused_from`, and is `"reused"`
        in `attempts.jsonl`. Grids that
        share runs (the claims grids: the same injections, the same MiniLM runs without
        injection) so stay reproducible.
    """

    output_dir: str
    base_models: Dict[str, str]
    tasks: List[str]
    glue_dir: str
    custom_tasks: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    variants: List[str] = field(default_factory=lambda: ["none", "tft"])
    base_variants: Dict[str, List[str]] = field(default_factory=dict)
    reference_base: Optional[str] = None
    custom_variants: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    train_sizes: List[Optional[int]] = field(default_factory=lambda: [None])
    seeds: List[int] = field(default_factory=lambda: [1])
    recipes: Dict[str, Dict[str, Any]] = field(default_factory=lambda: {"paper": {}})
    sweep: Dict[str, List[Any]] = field(default_factory=dict)
    sweep_seeds: Optional[List[int]] = None
    sweep_variants: bool = False
    sweep_held_out_fraction: Optional[float] = None
    run_fixed_recipes: bool = True
    glue_overrides: Dict[str, Any] = field(default_factory=dict)
    paraphrase_corpus: Optional[str] = None
    injection_overrides: Dict[str, Any] = field(default_factory=dict)
    injection_seed: int = 1
    injection_seeds: Optional[List[int]] = None
    metric_epoch: str = "last"
    retries: int = 1
    keep_weights: bool = True
    strategies: List[str] = field(default_factory=lambda: [CROSS])
    strategy_overrides: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    reuse_from: List[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._check_values()
        tasks = self.task_table()  # checks the custom tasks
        for task in self.tasks:
            if task not in self.custom_tasks:
                get_glue_task(task)
        self._check_strategies(tasks)
        self._check_variants()
        self._check_grid()
        self._check_recipes()

    def _check_values(self) -> None:
        """
        The lists that span the grid: not empty, no value twice, each value one a run can
        take (a training size is positive, a seed one that numpy takes).
        """
        if not self.tasks:
            raise ConfigurationError("'tasks' is empty: name at least one task to fine-tune on.")
        _check_distinct("tasks", self.tasks)
        for size in self.train_sizes:
            if size is not None and (not _is_integer(size) or size <= 0):
                raise ConfigurationError(
                    f"'train_sizes' must hold positive integers (or null, the whole training "
                    f"file), not {json.dumps(size)}."
                )
        _check_distinct("train_sizes", self.train_sizes)
        seeds = {
            "seeds": self.seeds,
            "sweep_seeds": self.sweep_seeds or [],
            "injection_seeds": self.injection_seeds or [],
            "injection_seed": [self.injection_seed],
        }
        for key, values in seeds.items():
            for seed in values:
                if not _is_integer(seed) or not 0 <= seed <= MAX_SEED:
                    raise ConfigurationError(
                        f"{key!r} must hold integers from 0 to {MAX_SEED} (seeds numpy takes), "
                        f"not {json.dumps(seed)}."
                    )
        _check_distinct("seeds", self.seeds)
        _check_distinct("sweep_seeds", self.sweep_seeds or [])
        if self.sweep_seeds == []:
            raise ConfigurationError("'sweep_seeds' is empty: leave it out to use the first seed.")
        if not _is_integer(self.retries) or self.retries < 0:
            raise ConfigurationError(
                f"'retries' must be 0 or more, not {json.dumps(self.retries)}."
            )
        variant_lists = {"variants": self.variants}
        variant_lists.update((f"base_variants.{b}", v) for b, v in self.base_variants.items())
        for key, variants in variant_lists.items():
            if not variants:
                raise ConfigurationError(f"{key!r} is empty: name at least one variant ('none').")
            _check_distinct(key, variants)

    def _check_strategies(self, tasks: Dict[str, SentenceTask]) -> None:
        known = FineTuningStrategy.list_available()
        unknown = [strategy for strategy in self.strategies if strategy not in known]
        if unknown or not self.strategies:
            raise ConfigurationError(
                f"Unknown strategies {unknown}; choose one or more of {sorted(known)}."
            )
        stray = sorted(set(self.strategy_overrides) - set(self.strategies))
        if stray:
            raise ConfigurationError(
                f"strategy_overrides names strategies the grid does not run: {stray}."
            )
        _check_distinct("strategies", self.strategies)
        unserved = [
            task
            for task in self.tasks
            if not any(strategy_named(s).applies_to(task) for s in self.strategies)
        ]
        if unserved:
            raise ConfigurationError(
                f"No strategy of 'strategies' {self.strategies} applies to the tasks {unserved}: "
                "they would have no run."
            )
        label_sets = {tasks[task].labels for task in self.tasks} - {()}
        multitask = any(strategy_named(s).trains_all_tasks for s in self.strategies)
        if multitask and self.custom_tasks:
            raise ConfigurationError("custom_tasks do not run under the multitask strategies.")
        if multitask and len(label_sets) > 1:
            raise ConfigurationError(
                "A multitask run shares one label namespace: its classification tasks need the "
                f"same labels, not {sorted(label_sets)} (tasks {self.tasks})."
            )

    def _check_variants(self) -> None:
        unknown_bases = sorted(set(self.base_variants) - set(self.base_models))
        if unknown_bases:
            raise ConfigurationError(f"base_variants names unknown bases {unknown_bases}.")
        reference = self.reference_base
        if reference is not None and (
            reference not in self.base_models
            or "none" not in self.base_variants.get(reference, self.variants)
        ):
            raise ConfigurationError(
                f"reference_base {reference!r} must be one of base_models "
                f"{sorted(self.base_models)} that runs the variant 'none'."
            )
        for name, custom in self.custom_variants.items():
            _check_custom_variant(name, custom)
        every = [v for variants in [self.variants, *self.base_variants.values()] for v in variants]
        known = [*VARIANTS, *self.custom_variants]
        unknown = [variant for variant in every if variant not in known]
        if unknown:
            raise ConfigurationError(f"Unknown variants {unknown}; choose from {known}.")
        uncovered = [v for v in every if self._config_name(v) and not self._corpus(v)]
        if uncovered:
            raise ConfigurationError(f"Injection variants {uncovered} need 'paraphrase_corpus'.")

    def _check_grid(self) -> None:
        mine = os.path.abspath(self.output_dir)
        if any(os.path.abspath(grid) == mine for grid in self.reuse_from):
            raise ConfigurationError("reuse_from names this grid's own output_dir.")
        if self.metric_epoch not in ("last", "best"):
            raise ConfigurationError("metric_epoch is 'last' or 'best'.")
        if not self.base_models or not self.seeds or not self.recipes or not self.train_sizes:
            raise ConfigurationError(
                "base_models, seeds, recipes and train_sizes must not be empty."
            )
        seeds = self.injection_seeds
        if seeds is not None and (not seeds or len(set(seeds)) < len(seeds)):
            raise ConfigurationError("injection_seeds must be distinct, and not empty.")

    def _check_recipes(self) -> None:
        if not self.run_fixed_recipes and not self.sweep:
            raise ConfigurationError("run_fixed_recipes false needs a sweep (recipe 'tuned').")
        if any(not isinstance(values, list) or not values for values in self.sweep.values()):
            raise ConfigurationError("Every sweep key needs a non-empty list of values.")
        clashes = set(self.recipes) & ({TUNED} | set(self.sweep_points()))
        if clashes:
            raise ConfigurationError(f"Recipe names {sorted(clashes)} are taken by the sweep.")
        held_out = self.sweep_held_out_fraction
        if (self.sweep_variants or held_out is not None) and not self.sweep:
            raise ConfigurationError(
                "sweep_variants and sweep_held_out_fraction need a sweep to act on."
            )
        if held_out is not None:
            if not isinstance(held_out, (int, float)) or not 0 < held_out < 1:
                raise ConfigurationError(
                    f"'sweep_held_out_fraction' must be between 0 and 1, not {held_out!r}."
                )
            several = [name for name in self.strategies if strategy_named(name).trains_all_tasks]
            if several:
                raise ConfigurationError(
                    f"sweep_held_out_fraction carves one task's training data; strategy "
                    f"{several[0]} trains several tasks at once."
                )

    @classmethod
    def from_file(cls, path: str, output_dir: Optional[str] = None) -> "ExperimentSpec":
        """
        Reads a JSON or jsonnet spec, whose `std.extVar`s are the environment's, else
        `SPEC_DEFAULTS` or the plugin's defaults; `output_dir` overrides the spec's.
        """
        defaults = {name: value for name, value in SPEC_DEFAULTS.items() if name not in os.environ}
        values = dataclass_settings(path, cls, defaults)  # unknown keys and wrong types: errors
        if output_dir is not None:
            values["output_dir"] = output_dir
        try:
            return cls(**values)
        except TypeError as error:
            raise ConfigurationError(f"{path}: {error}") from None
        except ConfigurationError as error:
            raise ConfigurationError(f"{path}: {error.message}") from None

    def task(self, name: str) -> SentenceTask:
        """The task `name` of the grid: one of its `custom_tasks`, or a GLUE task."""
        if name in self.custom_tasks:
            return custom_task(name, self.custom_tasks[name])
        return get_glue_task(name)

    def task_table(self) -> Dict[str, SentenceTask]:
        """Every task the grid may name (GLUE's and its custom ones), for its reports."""
        return grid_tasks(self.custom_tasks)

    def selection_metric(self, task: str) -> str:
        """The dev score the sweep maximises: the mean of the task's metrics, or its only one."""
        return self.task(task).validation_metric

    def dumps(self) -> str:
        """The spec as JSON, with the seeds that default to others' given."""
        resolved = {"sweep_seeds": self._sweep_seeds(), "injection_seeds": self._injection_seeds()}
        return json.dumps({**self.__dict__, **resolved}, indent=2)


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_distinct(key: str, values: Sequence[Any]) -> None:
    """A value given twice would name the same runs twice."""
    for index, value in enumerate(values):
        if value in values[:index]:
            raise ConfigurationError(f"{key!r} gives {json.dumps(value)} twice.")


def _check_custom_variant(name: str, custom: Dict[str, Any]) -> None:
    extra = sorted(set(custom) - {"variant", "paraphrase_corpus", "injection_overrides"})
    if name in VARIANTS or SEEDED in name or extra or not VARIANTS.get(custom.get("variant", "")):
        raise ConfigurationError(
            f"custom_variants[{name!r}]: a new name (no {SEEDED!r}), an injected "
            f"'variant' of {[v for v in VARIANTS if VARIANTS[v]]}, and optionally "
            f"'paraphrase_corpus' and 'injection_overrides' (unknown keys: {extra})."
        )
