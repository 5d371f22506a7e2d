"""
The experiment grid of `allennlp tft-experiment SPEC`: base checkpoints x injection variants x
GLUE tasks x training sizes x seeds x fine-tuning recipes, read from a JSON or jsonnet file and
expanded into runs that each own a directory.
"""
import itertools
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional

from allennlp.common import Params
from allennlp.common.checks import ConfigurationError

from tft_allennlp.common.glue_tasks import get_glue_task

CONFIGS_ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "training_configs")

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


def size_name(train_size: Optional[int]) -> str:
    """"all" for the whole training file, else the number of examples."""
    return "all" if train_size is None else str(train_size)


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
    """Fine-tunes one encoder on one GLUE task, training size, seed and recipe."""

    base: str
    variant: str
    recipe: str
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
    """

    output_dir: str
    base_models: Dict[str, str]
    tasks: List[str]
    glue_dir: str
    variants: List[str] = field(default_factory=lambda: ["none", "tft"])
    train_sizes: List[Optional[int]] = field(default_factory=lambda: [None])
    seeds: List[int] = field(default_factory=lambda: [1])
    recipes: Dict[str, Dict[str, Any]] = field(default_factory=lambda: {"paper": {}})
    glue_overrides: Dict[str, Any] = field(default_factory=dict)
    paraphrase_corpus: Optional[str] = None
    injection_overrides: Dict[str, Any] = field(default_factory=dict)
    injection_seed: int = 1
    metric_epoch: str = "last"
    retries: int = 1

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
            raise ConfigurationError("base_models, seeds, recipes and train_sizes must not be empty.")

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
                directory = os.path.join(self.output_dir, "injection", base, variant)
                yield InjectionRun(base, variant, directory)

    def glue_runs(self) -> Iterator[GlueRun]:
        grid = itertools.product(
            self.base_models, self.variants, self.recipes, self.tasks, self.train_sizes, self.seeds
        )
        for base, variant, recipe, task, size, seed in grid:
            directory = os.path.join(
                self.output_dir, "glue", base, variant, recipe, task, f"n{size_name(size)}", f"seed{seed}"
            )
            yield GlueRun(base, variant, recipe, task, size, seed, directory)

    def dumps(self) -> str:
        return json.dumps(self.__dict__, indent=2)
