"""
The example spec and this project's research specs (`research/specs/`) plan the grids they
describe, and the grids that reuse each other's runs would take them.
"""

import math
import os

import pytest

from tests import PROJECT_ROOT
from tft_experiments import ExperimentSpec, tuned_choices
from tft_experiments.expansion import strategy_named


def test_the_example_specs_describe_the_real_grid(tmp_path):
    for path in ("harness/tft_experiments/specs/minilm_glue", "research/specs/minilm_glue_cpu"):
        spec = ExperimentSpec.from_file(str(PROJECT_ROOT / f"{path}.jsonnet"), str(tmp_path))
        assert [run.variant for run in spec.injection_runs()] == ["tft", "tft_simple"]
        assert spec.variants == ["none", "tft", "tft_simple"] and spec.tasks == [
            "mrpc",
            "stsb",
            "rte",
        ]
        assert list(spec.candidates()) == ["paper", "lr0.0001", "lr0.0002"] and spec.seeds == [
            1,
            2,
            3,
        ]
        # Nothing has run, so the tuned grid is not known yet: only the paper's recipe is listed.
        sizes = len(spec.train_sizes)
        assert len(spec.tuned_keys()) == 3 * sizes and tuned_choices(spec) == {}
        assert (
            len(list(spec.glue_runs(tuned_choices(spec)))) == 3 * 3 * sizes * 3
        )  # variants x tasks x sizes x seeds
        assert len(list(spec.sweep_runs())) == 3 * 3 * sizes  # candidates x tasks x sizes
        assert spec.train_sizes == [1000, None]
    # The CPU grid cuts the fine-tuning epochs, and nothing else of the GLUE recipe.
    assert spec.glue_overrides == {"trainer.num_epochs": 2} and not spec.keep_weights


def test_the_strategies_spec_describes_its_grid(tmp_path):
    path = PROJECT_ROOT / "research/specs/strategies_cpu.jsonnet"
    spec = ExperimentSpec.from_file(str(path), str(tmp_path))
    cpu = ExperimentSpec.from_file(
        str(PROJECT_ROOT / "research/specs/minilm_glue_cpu.jsonnet"), str(tmp_path)
    )
    assert spec.variants == ["none", "tft"] and spec.tasks == ["sst2", "mrpc", "stsb"]
    assert spec.train_sizes == [1000] and spec.seeds == [1, 2, 3] and not spec.keep_weights
    assert spec.glue_overrides == {"trainer.num_epochs": 2}
    assert (spec.sweep, spec.recipes, spec.injection_overrides) == (
        cpu.sweep,
        cpu.recipes,
        cpu.injection_overrides,
    )
    assert not list(spec.glue_runs({}))  # recipe "tuned" alone, once the sweep has chosen
    runs = list(spec.glue_runs({key: "lr0.0002" for key in spec.tuned_keys()}))
    # Per variant and seed: 3 cross + 3 rows of one multitask run x 3 schedules + Siamese softmax
    # on MRPC and STS-B, cosine MSE on STS-B and MNR on MRPC.
    assert len(runs) == 2 * 3 * (3 + 3 * 3 + 2 + 1 + 1)
    assert len({run.directory for run in runs}) == 2 * 3 * (3 + 3 + 2 + 1 + 1)
    assert {run.task for run in runs if run.strategy.startswith("siamese")} == {"mrpc", "stsb"}


def test_the_adapters_spec_describes_its_grid(tmp_path):
    path = PROJECT_ROOT / "research/specs/adapters_cpu.jsonnet"
    spec = ExperimentSpec.from_file(str(path), str(tmp_path))
    assert spec.tasks == ["mrpc", "stsb", "rte", "sst2"] and spec.variants == ["none", "tft"]
    assert spec.train_sizes == [1000] and spec.seeds == [1, 2, 3]
    runs = list(spec.glue_runs({key: "lr0.0002" for key in spec.tuned_keys()}))
    # Every strategy applies to every task: 4 tasks x 5 strategies x 2 variants x 3 seeds.
    assert len(runs) == len({run.directory for run in runs}) == 4 * 5 * 2 * 3
    adapters = [run for run in runs if run.strategy == "adapters_three_shared"]
    assert 'variant="three_shared"' in adapters[0].config_text
    # The adapters train for 10 epochs, the cross-encoder and SMART for the grid's 2.
    assert spec.strategy_overrides == {
        name: {"trainer.num_epochs": 10}
        for name in ("adapters_houlsby", "adapters_not_shared", "adapters_three_shared")
    }


RESEARCH_SPECS = sorted((PROJECT_ROOT / "research/specs").glob("*.jsonnet"))


def planned_runs(spec):
    """Every run `spec` may train: its injections, its sweep, its grid whatever the sweep picks."""
    runs = list(spec.injection_runs()) + list(spec.sweep_runs())
    for candidate in spec.candidates():
        runs += spec.glue_runs({key: candidate for key in spec.tuned_keys()})
    return runs


@pytest.fixture(scope="module")
def research_grids(tmp_path_factory):
    """Every research spec's planned runs, all in one output folder: directory -> fingerprint."""
    output = str(tmp_path_factory.mktemp("grid"))
    grids = {}
    for path in RESEARCH_SPECS:
        spec = ExperimentSpec.from_file(str(path), output)
        runs = {run.directory: run.fingerprint for run in planned_runs(spec)}
        grids[f"research/results/{path.stem}/experiment"] = (spec, runs)
    return grids


@pytest.mark.parametrize("path", RESEARCH_SPECS, ids=lambda path: path.stem)
def test_every_research_spec_plans_the_grid_its_fields_describe(path, research_grids):
    """
    The runs counted from the spec's own lists (not retyped): one injection per injected variant
    of a base and injection seed; the sweep, every candidate on each task, size and base for the
    sweep seeds; the grid, every variant of a base (each injected one once more per further
    injection seed) under each strategy that applies to the task, for every size, seed and
    reported recipe. Every variant
    and task resolves to a config, no two runs of a recipe share a directory, and every grid the
    spec reuses is committed.
    """
    spec, _ = research_grids[f"research/results/{path.stem}/experiment"]
    injection_seeds = spec.injection_seeds or [spec.injection_seed]
    names = {base: spec.base_variants.get(base, spec.variants) for base in spec.base_models}
    injected = {base: [name for name in names[base] if name != "none"] for base in names}
    injections = list(spec.injection_runs())
    assert len(injections) == sum(len(injected[base]) for base in names) * len(injection_seeds)
    assert all(os.path.isfile(run.config) for run in injections)

    points = math.prod(len(values) for values in spec.sweep.values()) if spec.sweep else 0
    sweep_seeds = spec.sweep_seeds or spec.seeds[:1]
    # Swept per base, or per variant of each base (`sweep_variants`).
    swept = sum(len(names[base]) for base in names) if spec.sweep_variants else len(names)
    cells = len(spec.tasks) * len(spec.train_sizes) * swept
    sweep = list(spec.sweep_runs())
    assert len(sweep) == (len(sweep_seeds) * cells * (len(spec.recipes) + points) if points else 0)

    reported = bool(spec.sweep) + (len(spec.recipes) if spec.run_fixed_recipes else 0)
    labels = sum(
        len(names[base]) + len(injected[base]) * (len(injection_seeds) - 1) for base in names
    )
    strategies = sum(
        strategy_named(name).applies_to(task) for name in spec.strategies for task in spec.tasks
    )
    for candidate in spec.candidates():
        runs = list(spec.glue_runs({key: candidate for key in spec.tuned_keys()}))
        per_size_and_seed = labels * strategies * reported
        assert len(runs) == per_size_and_seed * len(spec.train_sizes) * len(spec.seeds)
        own = [(run.recipe, run.directory) for run in runs if not run.is_multitask]
        assert len(set(own)) == len(own)
        assert all(os.path.isfile(run.config) or run.config_text for run in runs + sweep)
    for grid in spec.reuse_from:
        assert (PROJECT_ROOT / grid / "spec.json").is_file(), grid


def test_an_injection_two_grids_share_through_reuse_is_the_same_in_both(research_grids):
    """Reuse takes an injection by its directory: both grids must mean the same by it."""
    for spec, runs in research_grids.values():
        for grid in spec.reuse_from:
            theirs = research_grids[grid][1]
            for run in spec.injection_runs():
                if run.directory in theirs:
                    assert theirs[run.directory] == run.fingerprint, (grid, run.directory)


# Issue 18's claims grids that reuse others' runs: the 4-epoch ones (the size grid at 4 epochs, the
# distant tasks, the ablations, the whole training sets), which share injections and runs.
CLAIMS_GRIDS = [
    "claims_size_4ep_cpu",
    "claims_distant_cpu",
    "claims_ablations_cpu",
    "claims_whole_cpu",
]


@pytest.mark.parametrize("name", CLAIMS_GRIDS)
def test_each_grid_a_claims_grid_reuses_holds_runs_it_would_take(name, research_grids):
    """
    A grid of `reuse_from` plans some of this grid's runs in the same directory with the same
    config, overrides, environment and encoder (`fingerprint`): runs reuse would take, not
    merely runs of the same name (a run of another schedule it would refuse).
    """
    spec, mine = research_grids[f"research/results/{name}/experiment"]
    for grid in spec.reuse_from:
        theirs = research_grids[grid][1]
        assert any(
            theirs.get(directory) == fingerprint for directory, fingerprint in mine.items()
        ), grid
