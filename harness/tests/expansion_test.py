"""
The recipe sweep as the spec expands it (`expansion.py`): its candidates' names, the tuned recipe
alone, and each variant tuned on training data held out.
"""

import json

import pytest
from allennlp.common.checks import ConfigurationError

from tests import FIXTURES_ROOT
from tests.allennlp_cli import forked_experiment_runs
from tft_experiments import ExperimentSpec, tuned_choices
from tft_experiments.commands.experiment import run_experiment, write_outputs


def test_sweep_names_and_clashes(tmp_path):
    values = {
        "output_dir": "x",
        "base_models": {"b": "m"},
        "tasks": ["rte"],
        "glue_dir": "g",
        "variants": ["none"],
        "sweep": {"trainer.optimizer.lr": [1e-4, 3e-5], "trainer.num_epochs": [2]},
    }
    spec = ExperimentSpec(**values)
    assert spec.sweep_points() == {
        "lr0.0001_epochs2": {"trainer.optimizer.lr": 1e-4, "trainer.num_epochs": 2},
        "lr3e-05_epochs2": {"trainer.optimizer.lr": 3e-5, "trainer.num_epochs": 2},
    }
    with pytest.raises(ConfigurationError, match="tuned"):
        ExperimentSpec(**values, recipes={"tuned": {}})
    with pytest.raises(ConfigurationError, match="non-empty"):
        ExperimentSpec(**{**values, "sweep": {"trainer.optimizer.lr": []}})


def test_without_fixed_recipes_the_grid_runs_the_tuned_recipe_alone(tmp_path):
    settings = dict(output_dir=str(tmp_path), base_models={"b": "m"}, tasks=["rte"], glue_dir="g")
    settings.update(variants=["none"], seeds=[1, 2], sweep={"trainer.optimizer.lr": [1e-4]})
    spec = ExperimentSpec(**settings, run_fixed_recipes=False)
    # "paper" still competes in the sweep, but is no grid recipe of its own.
    assert [run.candidate for run in spec.sweep_runs()] == ["paper", "lr0.0001"]
    assert not list(spec.glue_runs({}))
    runs = list(spec.glue_runs({("b", "none", "cross", "rte", None): "paper"}))
    assert [(run.recipe, run.candidate, run.seed) for run in runs] == [
        ("tuned", "paper", 1),
        ("tuned", "paper", 2),
    ]
    both = ExperimentSpec(**settings)
    assert len(list(both.glue_runs({("b", "none", "cross", "rte", None): "paper"}))) == 4
    del settings["sweep"]
    with pytest.raises(ConfigurationError, match="needs a sweep"):
        ExperimentSpec(**settings, run_fixed_recipes=False)


def test_each_variant_is_tuned_on_training_data_held_out_before_its_seeds_run(tmp_path, tiny_bert):
    # The baseline and the injected encoder each sweep the learning rate, validating on a
    # quarter of their training sample held out of training; each then runs with its choice.
    spec = ExperimentSpec(
        output_dir=str(tmp_path / "out"),
        base_models={"tiny": tiny_bert},
        tasks=["mrpc"],
        glue_dir=str(FIXTURES_ROOT / "glue"),
        variants=["none", "tft"],
        train_sizes=[8],
        recipes={"lr0.01": {"trainer.optimizer.lr": 1e-2}},
        sweep={"trainer.optimizer.lr": [1e-4]},
        run_fixed_recipes=False,
        sweep_variants=True,
        sweep_held_out_fraction=0.25,
        glue_overrides={"trainer.num_epochs": 1, "data_loader.batch_size": 4},
        paraphrase_corpus=str(FIXTURES_ROOT / "paraphrase/aligned.jsonl"),
        injection_overrides={
            "trainer.num_epochs": 1,
            "dataset_reader.validation_fraction": 0.25,
            "validation_dataset_reader.validation_fraction": 0.25,
        },
        keep_weights=False,
    )
    with forked_experiment_runs():
        statuses = run_experiment(spec)
    assert sorted(statuses.values()) == ["done"] * 7  # an injection, 4 sweep runs, 2 tuned
    train = str(FIXTURES_ROOT / "glue/MRPC/train.tsv")
    chosen = {}
    for variant in ("none", "tft"):
        scores = {}
        for candidate in ("lr0.01", "lr0.0001"):
            directory = tmp_path / f"out/sweep/tiny/{variant}/{candidate}/mrpc/n8/seed1"
            config = json.loads((directory / "config.json").read_text())
            assert config["validation_data_path"] == config["train_data_path"] == train
            assert config["dataset_reader"]["held_out_fraction"] == 0.25
            validation = config["validation_dataset_reader"]
            assert (validation["held_out"], validation["train_size"], validation["seed"]) == (
                True,
                8,
                1,
            )
            metrics = json.loads((directory / "metrics.json").read_text())
            scores[candidate] = metrics["validation_combined_score"]
        # The best (the first on a tie) on the held-out part.
        chosen[variant] = max(scores, key=lambda candidate: scores[candidate])
        reported = tmp_path / f"out/glue/tiny/{variant}/{chosen[variant]}/mrpc/n8/seed1"
        config = json.loads((reported / "config.json").read_text())
        assert config["validation_data_path"].endswith("MRPC/dev.tsv")
        assert "held_out_fraction" not in config["dataset_reader"]
    assert tuned_choices(spec) == {
        ("tiny", variant, "cross", "mrpc", 8): choice for variant, choice in chosen.items()
    }
    write_outputs(spec)
    report = (tmp_path / "out/results.md").read_text()
    assert (
        "Recipe chosen by each variant's own sweep, on 0.25 of the training data held out: "
        f"none MRPC n=8: `{chosen['none']}`; tft MRPC n=8: `{chosen['tft']}`."
    ) in report
    assert "### Recipe sweep (each variant on its own)" in report
    assert "Score (%) on 0.25 of the training data, held out of training, that selects" in report
    with pytest.raises(ConfigurationError, match="need a sweep to act on"):
        ExperimentSpec(**{**spec.__dict__, "sweep": {}, "run_fixed_recipes": True})
    with pytest.raises(ConfigurationError, match="between 0 and 1, not 1.5"):
        ExperimentSpec(**{**spec.__dict__, "sweep_held_out_fraction": 1.5})
