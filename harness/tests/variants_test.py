"""
Injection variants (`variants.py`): injection seeds, custom variants, a base's own variants; and
a task of one's own (`custom_tasks`) run by name in the grid.
"""

import json
import os

import pytest
import torch
from allennlp.common.checks import ConfigurationError
from transformers import AutoModel

from tests import FIXTURES_ROOT
from tests.allennlp_cli import forked_experiment_runs
from tft_experiments import ExperimentSpec, collect_results
from tft_experiments.commands.experiment import run_experiment, write_outputs
from tft_experiments.variants import split_variant
from tiny_grids import tiny_strategy_spec


def test_injection_seeds_are_variants_of_their_own():
    assert split_variant("tft_iseed2") == ("tft", 2)
    assert split_variant("+3way-PP_iseed11") == ("+3way-PP", 11)
    assert split_variant("tft") == ("tft", None) and split_variant("_iseed2") == ("_iseed2", None)
    spec = tiny_strategy_spec(
        "out", variants=["none", "tft", "tft_simple"], injection_seeds=[3, 4], paraphrase_corpus="c"
    )
    assert spec.all_variants("b") == [
        "none",
        "tft",
        "tft_simple",
        "tft_iseed4",
        "tft_simple_iseed4",
    ]
    injections = {run.variant: run for run in spec.injection_runs()}
    assert {variant: run.seed for variant, run in injections.items()} == {
        "tft": 3,
        "tft_simple": 3,
        "tft_iseed4": 4,
        "tft_simple_iseed4": 4,
    }
    assert injections["tft_iseed4"].config == injections["tft"].config
    assert injections["tft_iseed4"].directory == os.path.join("out", "injection", "b", "tft_iseed4")
    run = next(run for run in spec.glue_runs({}) if run.variant == "tft_simple_iseed4")
    assert spec.injection_of(run) == injections["tft_simple_iseed4"]
    with pytest.raises(ConfigurationError, match="distinct"):
        tiny_strategy_spec("out", injection_seeds=[1, 1])


def test_each_injection_seed_is_injected_with_its_seed(tmp_path, tiny_bert):
    spec = ExperimentSpec(
        output_dir=str(tmp_path / "out"),
        base_models={"tiny": tiny_bert},
        tasks=["stsb"],
        glue_dir=str(FIXTURES_ROOT / "glue"),
        variants=["tft"],
        train_sizes=[8],
        injection_seeds=[1, 2],
        glue_overrides={"trainer.num_epochs": 1},
        paraphrase_corpus=str(FIXTURES_ROOT / "paraphrase/aligned.jsonl"),
        injection_overrides={
            "trainer.num_epochs": 1,
            "dataset_reader.validation_fraction": 0.25,
            "validation_dataset_reader.validation_fraction": 0.25,
        },
        keep_weights=False,
    )
    with forked_experiment_runs():
        assert sorted(run_experiment(spec).values()) == ["done"] * 4
    encoders = []
    for variant, seed in (("tft", 1), ("tft_iseed2", 2)):
        directory = tmp_path / "out" / "injection" / "tiny" / variant
        config = json.loads((directory / "config.json").read_text())
        assert (config["random_seed"], config["numpy_seed"], config["pytorch_seed"]) == (seed,) * 3
        encoders.append(AutoModel.from_pretrained(str(directory / "encoder")).state_dict())
    # Different seeds, different injected encoders.
    assert any(not torch.equal(encoders[0][key], encoders[1][key]) for key in encoders[0])
    assert [row["variant"] for row in collect_results(spec)] == ["tft", "tft_iseed2"]


def test_a_base_may_run_its_own_variants():
    spec = tiny_strategy_spec(
        "out",
        base_models={"small": "s", "large": "l"},
        variants=["none", "tft"],
        base_variants={"large": ["none"]},
        paraphrase_corpus="c",
    )
    assert [run.base for run in spec.injection_runs()] == ["small"]
    assert {(run.base, run.variant) for run in spec.glue_runs({})} == {
        ("small", "none"),
        ("small", "tft"),
        ("large", "none"),
    }
    with pytest.raises(ConfigurationError, match="unknown bases \\['huge'\\]"):
        tiny_strategy_spec("out", base_variants={"huge": ["none"]})
    with pytest.raises(ConfigurationError, match="tft_xl"):
        tiny_strategy_spec("out", base_variants={"b": ["tft_xl"]})
    # The reference base of the cross-base comparison runs without injection.
    assert (
        tiny_strategy_spec(
            "out", base_models={"small": "s", "large": "l"}, reference_base="large"
        ).reference_base
        == "large"
    )
    for bad in ({"reference_base": "huge"}, {"reference_base": "large", "variants": ["tft"]}):
        with pytest.raises(ConfigurationError, match="that runs the variant 'none'"):
            tiny_strategy_spec(
                "out", base_models={"small": "s", "large": "l"}, paraphrase_corpus="c", **bad
            )


def test_a_custom_variant_injects_its_own_corpus_with_its_own_overrides():
    spec = tiny_strategy_spec(
        "out",
        variants=["none", "tft", "tft_old_aligner"],
        paraphrase_corpus="new.jsonl",
        injection_overrides={"trainer.num_epochs": 4},
        injection_seeds=[1, 2],
        custom_variants={
            "tft_old_aligner": {
                "variant": "tft",
                "paraphrase_corpus": "old.jsonl",
                "injection_overrides": {"data_loader.batches_per_epoch": 5},
            }
        },
    )
    runs = {run.variant: run for run in spec.injection_runs()}
    assert list(runs) == ["tft", "tft_old_aligner", "tft_iseed2", "tft_old_aligner_iseed2"]
    assert runs["tft_old_aligner"].config == runs["tft"].config
    assert (runs["tft"].corpus, runs["tft_old_aligner_iseed2"].corpus) == ("new.jsonl", "old.jsonl")
    assert json.loads(runs["tft_old_aligner_iseed2"].overrides) == {
        "trainer.num_epochs": 4,
        "data_loader.batches_per_epoch": 5,
    }
    assert runs["tft_old_aligner_iseed2"].seed == 2
    glue = next(run for run in spec.glue_runs({}) if run.variant == "tft_old_aligner")
    assert spec.injection_of(glue) == runs["tft_old_aligner"]
    for bad in ({"variant": "none"}, {"variant": "tft", "corpus": "x"}):
        with pytest.raises(ConfigurationError, match="custom_variants\\['mine'\\]"):
            tiny_strategy_spec("out", custom_variants={"mine": bad}, paraphrase_corpus="c")
    with pytest.raises(ConfigurationError, match="need 'paraphrase_corpus'"):
        tiny_strategy_spec("out", variants=["tft"])


def test_a_task_of_ones_own_runs_by_name_in_the_grid(tmp_path, tiny_bert):
    lines = ["first\tsecond\tverdict"] + [
        f"{a}\t{b}\t{label}"
        for a, b, label in [
            ("the cat sat .", "a cat sat .", "same"),
            ("the dog ran .", "it rained .", "different"),
        ]
        * 3
    ]
    (tmp_path / "pairs.tsv").write_text("\n".join(lines) + "\n")
    paraphrase = {
        "task": {
            "sentence1": "first",
            "sentence2": "second",
            "label": "verdict",
            "labels": ["same", "different"],
            "metrics": ["accuracy", "f1"],
            "positive_label": "same",
        },
        "train_data_path": str(tmp_path / "pairs.tsv"),
        "validation_data_path": str(tmp_path / "pairs.tsv"),
    }
    spec = ExperimentSpec(
        output_dir=str(tmp_path / "out"),
        base_models={"tiny": tiny_bert},
        tasks=["paraphrase"],
        custom_tasks={"paraphrase": paraphrase},
        glue_dir=str(FIXTURES_ROOT / "glue"),
        variants=["none"],
        strategies=["cross", "smart"],
        glue_overrides={"trainer.num_epochs": 1},
        keep_weights=False,
    )
    with forked_experiment_runs():
        statuses = run_experiment(spec)
    assert sorted(statuses.values()) == ["done"] * 2
    write_outputs(spec)
    rows = collect_results(spec)
    assert [(row["strategy"], row["task"]) for row in rows] == [
        ("cross", "paraphrase"),
        ("smart", "paraphrase"),
    ]
    for row in rows:
        assert row["combined_score"] == pytest.approx((row["accuracy"] + row["f1"]) / 2)
    assert "PARAPHRASE F1" in open(os.path.join(spec.output_dir, "results.md")).read()
    # The Siamese strategies skip it; the multitask ones take GLUE tasks only.
    siamese = ExperimentSpec(**{**spec.__dict__, "strategies": ["cross", "siamese_softmax"]})
    assert [run.strategy for run in siamese.glue_runs({})] == ["cross"]
    with pytest.raises(ConfigurationError, match="not run under the multitask strategies"):
        ExperimentSpec(**{**spec.__dict__, "strategies": ["multitask_shuffled"]})
    with pytest.raises(ConfigurationError, match="not a GLUE task's"):
        ExperimentSpec(**{**spec.__dict__, "custom_tasks": {"mrpc": paraphrase}})
