import argparse
import csv
import dataclasses
import itertools
import json
import logging
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from safetensors.torch import save_file
from transformers import AutoModel

from tests import CONFIGS_ROOT, FIXTURES_ROOT, PROJECT_ROOT
from tests.allennlp_cli import forked_allennlp, forked_experiment_runs
from tft_experiments import ExperimentSpec, collect_results, tuned_choices
from tft_experiments.commands.experiment import Experiment, run_experiment, write_outputs
from tft_experiments.expansion import strategy_named
from tft_experiments.locks import RunLock
from tft_experiments.outcomes import (
    encoder_fingerprint,
    read_fingerprint,
    run_row,
    tuned_choice,
)
from tft_experiments.report import markdown_table, plot
from tft_experiments.reuse import (
    config_difference,
    copy_run,
    find_reusable,
    injection_origin,
)
from tft_experiments.runner import ExperimentRunner, parse_shard
from tft_experiments.runs import InjectionRun, grid_of
from tft_experiments.strategies.multitask import multitask_overrides
from tft_experiments.table import TABLE, append_row, forget_runs
from tft_experiments.training import RunStopped, resumable
from tft_experiments.variants import split_variant


@pytest.fixture(scope="module")
def experiment(tmp_path_factory, tiny_bert):
    """
    A 2 variants x 2 seeds grid on the fixtures, with the paper's recipe and one tuned by a
    2-point learning-rate sweep, run by two `allennlp tft-experiment --shard i/2` processes at
    once (as two machines sharing the output directory would), then `--report-only`.
    """
    directory = tmp_path_factory.mktemp("experiment")
    split = {
        "dataset_reader.validation_fraction": 0.25,
        "validation_dataset_reader.validation_fraction": 0.25,
    }
    spec = {
        "output_dir": str(directory / "out"),
        "base_models": {"tiny": tiny_bert},
        "variants": ["none", "tft"],
        "tasks": ["stsb"],
        "train_sizes": [8],
        "seeds": [1, 2],
        "glue_dir": str(FIXTURES_ROOT / "glue"),
        # Batches of 2: 4 steps, so that the learning rate matters after the warmup step.
        "glue_overrides": {"trainer.num_epochs": 1, "data_loader.batch_size": 2},
        # The sweep tries the paper's recipe (lr 3e-5) and lr 3e-3 on the base model.
        "sweep": {"trainer.optimizer.lr": [3e-3]},
        "keep_weights": False,
        "paraphrase_corpus": str(FIXTURES_ROOT / "paraphrase/aligned.jsonl"),
        "injection_overrides": {"trainer.num_epochs": 1, **split},
    }
    spec_path = directory / "spec.json"
    spec_path.write_text(json.dumps(spec))
    command = ["tft-experiment", str(spec_path), "--poll-seconds", "1"]
    # Forked children (tests/allennlp_cli.py), as are the runs they start.
    with forked_experiment_runs():
        shards = forked_allennlp(*(command + ["--shard", f"{i}/2"] for i in range(2)))
    for shard in shards:
        assert shard.returncode == 0, shard.stderr[-3000:]
    (report,) = forked_allennlp(command + ["--report-only"])
    assert report.returncode == 0, report.stderr[-3000:]
    spec = ExperimentSpec.from_file(str(spec_path))
    # Together the shards ran every distinct directory once: a sweep run that is also a grid
    # run is not repeated, and no run ran in both shards.
    choices = tuned_choices(spec)
    distinct = {
        run.directory
        for run in [*spec.injection_runs(), *spec.sweep_runs(), *spec.glue_runs(choices)]
    }
    attempts = [json.loads(line) for line in open(directory / "out/attempts.jsonl")]
    assert sorted(a["directory"] for a in attempts) == sorted(
        os.path.relpath(d, spec.output_dir) for d in distinct
    )
    assert {a["outcome"] for a in attempts} == {"done"} and {a["shard"] for a in attempts} == {
        "0/2",
        "1/2",
    }
    return spec


def reported_runs(spec):
    return list(spec.glue_runs(tuned_choices(spec)))


def glue_metrics(run):
    return json.loads(open(os.path.join(run.directory, "metrics.json")).read())


def lose(run):
    """`run` as a crash before it finished leaves it: its metrics and its row are not there."""
    os.remove(os.path.join(run.directory, "metrics.json"))
    grid, relative = grid_of(run)
    forget_runs(grid, [relative])


def record_encoder(injection, fingerprint):
    """The row of `injection` with `fingerprint` as the record of its encoder (None: none)."""
    grid, relative = grid_of(injection)
    append_row(grid, {**run_row(injection), "encoder_sha256": fingerprint})


def test_every_run_has_its_config_metrics_and_log(experiment):
    runs = reported_runs(experiment)
    assert [(run.recipe, run.seed) for run in runs] == [
        (recipe, seed) for recipe in ("tuned", "paper") for seed in (1, 2) for _ in ("none", "tft")
    ]
    for run in runs:
        # keep_weights=False: the weights are gone, the record of the run is not.
        assert {"config.json", "metrics.json", "train.log"} <= set(os.listdir(run.directory))
        assert not [name for name in os.listdir(run.directory) if name.endswith((".th", ".tar.gz"))]
        assert "pretrained_transformers" not in os.listdir(run.directory)
        config = json.loads(open(os.path.join(run.directory, "config.json")).read())
        assert config["random_seed"] == run.seed and config["dataset_reader"]["train_size"] == 8
        # The subsample's seed is the run's: every variant of a seed sees the same examples.
        assert config["dataset_reader"]["seed"] == run.seed
        assert (
            config["trainer"]["optimizer"]["lr"] == {"paper": 3e-5, "lr0.003": 3e-3}[run.candidate]
        )
        model = config["model"]["text_field_embedder"]["token_embedders"]["tokens"]["model_name"]
        injected = os.path.join(experiment.output_dir, "injection/tiny/tft/encoder")
        assert model == (injected if run.variant == "tft" else experiment.base_models["tiny"])
    assert os.path.exists(
        os.path.join(experiment.output_dir, "injection/tiny/tft/encoder/model.safetensors")
    )


def test_the_sweep_picks_the_base_models_best_recipe_for_every_variant(experiment):
    sweep = list(experiment.sweep_runs())
    assert [(run.variant, run.candidate, run.seed) for run in sweep] == [
        ("none", "paper", 1),
        ("none", "lr0.003", 1),
    ]
    scores = {run.candidate: glue_metrics(run)["validation_combined_score"] for run in sweep}
    assert len(set(scores.values())) == 2
    chosen = max(scores, key=scores.get)
    assert {run.candidate for run in reported_runs(experiment) if run.recipe == "tuned"} == {chosen}
    table = open(os.path.join(experiment.output_dir, "results.md")).read()
    line = "Recipe chosen by the sweep on the base model: STSB n=8: `lr0.003`."
    assert (line in table) == (chosen == "lr0.003")
    sweep_rows = table[table.index("### Recipe sweep") :].splitlines()
    for candidate, score in scores.items():
        cell = f"{100 * score:.1f}"
        expected = (
            f"| `{candidate}` | **{cell}** |"
            if candidate == chosen
            else f"| `{candidate}` | {cell} |"
        )
        assert expected in sweep_rows


def test_csv_and_table_hold_the_runs_metrics(experiment):
    with open(os.path.join(experiment.output_dir, "runs.csv")) as handle:
        rows = list(csv.DictReader(handle))
    # runs x (pearson, spearman, combined_score, trainable_parameters)
    assert len(rows) == 8 * 4
    table = open(os.path.join(experiment.output_dir, "results.md")).read()
    sections = {recipe: table[table.index(f"recipe `{recipe}`") :] for recipe in ("tuned", "paper")}
    for recipe, variant in itertools.product(("tuned", "paper"), ("none", "tft")):
        pearsons = []
        for run in reported_runs(experiment):
            if (run.recipe, run.variant) != (recipe, variant):
                continue
            metrics = glue_metrics(run)
            written = {
                row["metric"]: float(row["value"])
                for row in rows
                if row["recipe"] == recipe
                and row["directory"] == os.path.relpath(run.directory, experiment.output_dir)
            }
            counts = json.loads(open(os.path.join(run.directory, "parameter_counts.json")).read())
            assert written == {
                **{
                    name: metrics[f"validation_{name}"]
                    for name in ("pearson", "spearman", "combined_score")
                },
                "trainable_parameters": counts["trainable"],
            }
            pearsons.append(100 * metrics["validation_pearson"])
        assert len(set(pearsons)) == 2  # seeds differ, so mean and std are checked for real
        row = next(
            line for line in sections[recipe].splitlines() if line.startswith(f"| 8 | {variant} |")
        )
        assert f"{statistics.mean(pearsons):.1f} ± {statistics.stdev(pearsons):.1f}" in row
    with open(os.path.join(experiment.output_dir, "scores.png"), "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"


def test_resuming_reruns_only_unfinished_runs(experiment):
    runs = [run for run in reported_runs(experiment) if run.recipe == "paper"]
    finished = {
        run.directory: os.path.getmtime(os.path.join(run.directory, "metrics.json")) for run in runs
    }
    # A run that crashed: its directory is there, its metrics and its row are not.
    lose(runs[1])
    with forked_experiment_runs():
        statuses = ExperimentRunner(experiment).run()
    assert statuses[runs[1].directory] == "done"
    assert {
        directory: status
        for directory, status in statuses.items()
        if directory != runs[1].directory
    } == {directory: "skipped" for directory in statuses if directory != runs[1].directory}
    for run in runs[:1] + runs[2:]:
        assert (
            os.path.getmtime(os.path.join(run.directory, "metrics.json")) == finished[run.directory]
        )


def test_an_injection_runs_again_only_for_a_fine_tuning_left_to_run_and_to_the_same_encoder(
    experiment,
):
    # A fresh machine: the grid's files came from git, its exported encoder (weights) did not.
    (injection,) = experiment.injection_runs()
    encoder = injection.encoder
    recorded = read_fingerprint(injection)
    assert recorded == encoder_fingerprint(encoder)
    os.rename(encoder, encoder + ".away")
    attempts_path = os.path.join(experiment.output_dir, "attempts.jsonl")
    attempts = open(attempts_path).read()
    with forked_experiment_runs():
        statuses = ExperimentRunner(experiment).run()
    # Every fine-tuning of it finished, so it is not trained again, nor does anything wait.
    assert statuses[injection.directory] == "skipped"
    assert set(statuses.values()) == {"skipped"}
    assert open(attempts_path).read() == attempts and not os.path.exists(encoder)

    # One fine-tuning of it is lost, and the injection's record names another encoder (as if
    # the first build had come out otherwise, e.g. from a GPU's nondeterministic kernels): the
    # injection runs again, once, and fails; its new encoder is deleted and the record kept, so
    # that the lost fine-tuning never fine-tunes a different encoder than its seeds did.
    lost = next(run for run in reported_runs(experiment) if run.variant == "tft")
    lose(lost)
    record_encoder(injection, "0" * 64)
    with forked_experiment_runs():
        statuses = ExperimentRunner(experiment).run()
    assert statuses[injection.directory] == statuses[lost.directory] == "failed"
    new_attempts = open(attempts_path).read()[len(attempts) :].splitlines()
    assert [json.loads(line)["outcome"] for line in new_attempts] == ["failed"]
    assert not os.path.exists(encoder) and read_fingerprint(injection) == "0" * 64
    assert not os.path.exists(os.path.join(lost.directory, "metrics.json"))

    # With its true record, the injection runs again to the same weights, then the lost
    # fine-tuning; nothing else. The record is its row, which `allennlp train -f` emptying the
    # directory leaves as it was.
    record_encoder(injection, recorded)
    with forked_experiment_runs():
        statuses = ExperimentRunner(experiment).run()
    ran = {directory for directory, status in statuses.items() if status != "skipped"}
    assert ran == {injection.directory, lost.directory}
    assert statuses[injection.directory] == statuses[lost.directory] == "done"
    before = AutoModel.from_pretrained(encoder + ".away").state_dict()
    after = AutoModel.from_pretrained(encoder).state_dict()
    assert before.keys() == after.keys()
    assert all(torch.equal(before[name], after[name]) for name in before)
    assert read_fingerprint(injection) == recorded
    assert not os.path.exists(os.path.join(injection.directory, "encoder_fingerprint.json"))
    shutil.rmtree(encoder + ".away")


def test_the_fingerprint_of_an_encoder_is_that_of_its_tensors(tmp_path):
    # Hand-computed: `printf 'w torch.float32 (2,)\n\x00\x00\x80\x3f\x00\x00\x00\xc0' | sha256sum`
    # (the name, dtype and shape line, then 1.0 and -2.0 as little-endian float32).
    one, other = tmp_path / "one", tmp_path / "other"
    for directory in (one, other):
        directory.mkdir()
    save_file({"w": torch.tensor([1.0, -2.0])}, str(one / "model.safetensors"))
    assert encoder_fingerprint(str(one)) == (
        "e43ce08956af57d3c7dd8fd9bbabcdc231c779b6dffdfbf041a8031cd2d581d7"
    )
    # The same tensors saved with other metadata and under another file name: the same encoder.
    save_file({"w": torch.tensor([1.0, -2.0])}, str(other / "weights.safetensors"), {"a": "b"})
    assert encoder_fingerprint(str(other)) == encoder_fingerprint(str(one))
    save_file({"w": torch.tensor([1.0, -2.5])}, str(other / "weights.safetensors"))
    assert encoder_fingerprint(str(other)) != encoder_fingerprint(str(one))
    with pytest.raises(FileNotFoundError, match="no \\*.safetensors"):
        encoder_fingerprint(str(tmp_path))


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


def test_a_spec_with_an_unknown_variant_is_refused(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(
        json.dumps(
            {
                "output_dir": "x",
                "base_models": {"b": "m"},
                "tasks": ["rte"],
                "glue_dir": "g",
                "variants": ["none", "tft_large"],
            }
        )
    )
    with pytest.raises(ConfigurationError, match="tft_large"):
        ExperimentSpec.from_file(str(path))


def test_tuned_candidate_is_the_best_mean_over_sweep_seeds(tmp_path):
    spec = ExperimentSpec(
        output_dir=str(tmp_path),
        base_models={"b": "m"},
        tasks=["rte", "stsb"],
        glue_dir="g",
        variants=["none"],
        seeds=[1, 2, 3],
        sweep_seeds=[1, 2],
        sweep={"trainer.optimizer.lr": [1e-4, 2e-4]},
    )

    def finish(task, candidate, seed, value):
        run = next(
            run
            for run in spec.sweep_runs()
            if (run.task, run.candidate, run.seed) == (task, candidate, seed)
        )
        os.makedirs(run.directory)
        metric = "accuracy" if task == "rte" else "combined_score"
        with open(os.path.join(run.directory, "metrics.json"), "w") as handle:
            json.dump({f"validation_{metric}": value, "validation_loss": 0.1}, handle)

    # RTE: means 0.5, 0.625, 0.625 -> the first of the two best; seed 2 of lr0.0002 still running.
    for candidate, scores in {
        "paper": (0.5, 0.5),
        "lr0.0001": (0.75, 0.5),
        "lr0.0002": (0.5, 0.75),
    }.items():
        finish("rte", candidate, 1, scores[0])
        if candidate != "lr0.0002":
            finish("rte", candidate, 2, scores[1])
    assert tuned_choice(spec, ("b", "none", "cross", "rte", None)) is None
    assert not [run for run in spec.glue_runs(tuned_choices(spec)) if run.recipe == "tuned"]
    finish("rte", "lr0.0002", 2, 0.75)
    assert tuned_choice(spec, ("b", "none", "cross", "rte", None)) == "lr0.0001"
    # STS-B: a run that predicted a constant has a NaN correlation and ranks last.
    for candidate, score in {"paper": 0.2, "lr0.0001": float("nan"), "lr0.0002": 0.1}.items():
        finish("stsb", candidate, 1, score)
        finish("stsb", candidate, 2, score)
    assert tuned_choice(spec, ("b", "none", "cross", "stsb", None)) == "paper"
    assert set(tuned_choices(spec)) == set(spec.tuned_keys())
    tuned = [
        (run.task, run.candidate, run.seed)
        for run in spec.glue_runs(tuned_choices(spec))
        if run.recipe == "tuned"
    ]
    assert tuned == [
        (task, {"rte": "lr0.0001", "stsb": "paper"}[task], seed)
        for seed in (1, 2, 3)
        for task in ("rte", "stsb")
    ]


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


def test_table_marks_cells_with_fewer_seeds_and_gains_over_none():
    def row(variant, seed, accuracy):
        return {
            "base": "b",
            "variant": variant,
            "recipe": "paper",
            "candidate": "paper",
            "task": "rte",
            "train_size": "1000",
            "seed": seed,
            "accuracy": accuracy,
            "directory": "d",
        }

    table = markdown_table([row("none", 1, 0.5), row("none", 2, 0.75), row("tft", 1, 0.75)])
    lines = table.splitlines()
    assert "| 1000 | none | 62.5 ± 17.7 |" in lines
    assert "| 1000 | tft | **75.0 ± 0.0 [n=1] (+12.5)** |" in lines
    # A size where only the base has finished: nothing to compare, so nothing in bold.
    lone = dict(row("none", 1, 0.5), train_size="all")
    assert (
        "| all | none | 50.0 ± 0.0 [n=1] |"
        in markdown_table([row("none", 1, 0.5), row("none", 2, 0.75), lone]).splitlines()
    )


def test_plot_marks_points_with_fewer_seeds(tmp_path, monkeypatch):
    from matplotlib.axes import Axes

    def row(variant, seed, accuracy):
        return {
            "base": "b",
            "variant": variant,
            "recipe": "paper",
            "candidate": "paper",
            "task": "rte",
            "train_size": "1000",
            "seed": seed,
            "accuracy": accuracy,
            "directory": "d",
        }

    marks = []
    monkeypatch.setattr(Axes, "annotate", lambda axis, text, xy, **kwargs: marks.append((text, xy)))
    plot(
        [row("none", 1, 0.5), row("none", 2, 0.75), row("tft", 1, 0.75)],
        str(tmp_path / "scores.png"),
    )
    # Only tft's point lacks a seed; it sits at x = 0 dodged right by 0.04, at its mean 75%.
    assert marks == [("n=1", (0.04, 75.0))]
    assert (tmp_path / "scores.png").stat().st_size > 0


def test_plot_gives_each_strategy_a_slot(tmp_path, monkeypatch):
    from matplotlib.axes import Axes

    def row(variant, strategy, seed, f1):
        return {
            **dict(base="b", variant=variant, recipe="paper", candidate="paper", task="mrpc"),
            **dict(train_size="1000", seed=seed, accuracy=0.5, f1=f1, directory="d"),
            "strategy": strategy,
        }

    marks, ticks = [], []
    monkeypatch.setattr(Axes, "annotate", lambda axis, text, xy, **kwargs: marks.append((text, xy)))
    original = Axes.set_xticks
    monkeypatch.setattr(
        Axes,
        "set_xticks",
        lambda axis, positions, labels=None, **kwargs: (
            ticks.append((list(positions), labels)) or original(axis, positions, labels, **kwargs)
        ),
    )
    rows = [row("none", "cross", 1, 0.8), row("none", "cross", 2, 0.9)]
    rows += [row("tft", "cross", 1, 0.8), row("tft", "cross", 2, 0.8)]
    rows += [row("none", "siamese_mnr", 1, 0.7), row("none", "siamese_mnr", 2, 0.7)]
    rows += [row("tft", "siamese_mnr", 1, 0.6)]
    plot(rows, str(tmp_path / "scores.png"))
    # Slot 0: cross, slot 1: siamese_mnr; tft is dodged right by 0.04; its MNR point lacks a seed.
    assert ticks == [([0, 1], ["cross", "siamese_mnr"])]
    assert marks == [("n=1", (1.04, 60.0))]


def test_two_processes_on_one_grid_never_run_a_run_twice(tmp_path, tiny_bert):
    """Two unsharded `--jobs 2` processes on the same grid share it out through the run locks."""
    spec = {
        "output_dir": str(tmp_path / "out"),
        "base_models": {"tiny": tiny_bert},
        "variants": ["none"],
        "tasks": ["stsb"],
        "train_sizes": [8],
        "seeds": [1, 2],
        "glue_dir": str(FIXTURES_ROOT / "glue"),
        "recipes": {"paper": {}, "fast": {"trainer.optimizer.lr": 1e-3}},
        "glue_overrides": {"trainer.num_epochs": 1},
        "keep_weights": False,
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    command = [
        sys.executable,
        "-m",
        "allennlp",
        "tft-experiment",
        str(tmp_path / "spec.json"),
        "--jobs",
        "2",
        "--poll-seconds",
        "1",
    ]
    processes = [
        subprocess.Popen(
            command, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [process.communicate() for process in processes]
    assert [process.returncode for process in processes] == [0, 0], (
        outputs[0][1][-2000:] + outputs[1][1][-2000:]
    )
    attempts = [json.loads(line) for line in open(tmp_path / "out/attempts.jsonl")]
    directories = [a["directory"] for a in attempts]
    assert len(directories) == len(set(directories)) == 4  # 2 recipes x 2 seeds, each run once
    assert {a["outcome"] for a in attempts} == {"done"}
    assert not list((tmp_path / "out").rglob("seed*.lock"))  # every run lock was released
    # What one process did not run itself, it found finished by the other.
    # Each ends with "runs: 2 done, 2 skipped; report of 4 finished runs: ...".
    reported = [output.splitlines()[-1] for output, _ in outputs]
    done = [
        re.match(r"runs: (?:(\d+) done)?.*; report of 4 finished runs: ", line) for line in reported
    ]
    assert all(done), reported
    assert sum(int(match.group(1) or 0) for match in done) == 4


def test_a_shard_without_waiting_leaves_runs_that_need_another_shards_injection(
    tmp_path, tiny_bert
):
    spec = stsb_injection_spec(tmp_path, tiny_bert)
    injection = next(spec.injection_runs())
    none_run, tft_run = spec.glue_runs({})
    # The fine-tuning of the injected encoder in one shard, its injection and the base model's
    # run in others.
    shard = shard_owning(spec, [tft_run], [injection, none_run])
    statuses = ExperimentRunner(spec, shard=shard, wait=False).run()
    assert statuses == {tft_run.directory: "waiting"}
    # Once the owner of the injection has marked it failed, the fine-tuning fails at once.
    os.makedirs(os.path.dirname(injection.directory), exist_ok=True)
    open(injection.directory + ".failed", "w").close()
    assert ExperimentRunner(spec, shard=shard).run() == {tft_run.directory: "failed"}


def test_a_process_without_injections_leaves_them_and_their_fine_tunings_to_others(
    tmp_path, tiny_bert
):
    spec = stsb_injection_spec(tmp_path, tiny_bert)
    injection = next(spec.injection_runs())
    none_run, tft_run = spec.glue_runs({})
    # A shard that owns the injection and the fine-tuning of its encoder, not the base model's run.
    shard = shard_owning(spec, [injection, tft_run], [none_run])
    statuses = ExperimentRunner(spec, shard=shard, wait=False, injections=False).run()
    assert statuses == {injection.directory: "waiting", tft_run.directory: "waiting"}
    assert not os.path.exists(injection.directory)
    assert not os.path.exists(os.path.join(str(tmp_path), "attempts.jsonl"))
    # The command line's flag.
    parser = argparse.ArgumentParser()
    Experiment().add_subparser(parser.add_subparsers())
    assert parser.parse_args(["tft-experiment", "s", "--no-injections"]).no_injections
    assert not parser.parse_args(["tft-experiment", "s"]).no_injections


def stsb_injection_spec(directory, tiny_bert):
    """A grid of STS-B at 8 pairs, `none` and `tft` (its corpus and GLUE files are not there)."""
    return ExperimentSpec(
        output_dir=str(directory),
        base_models={"tiny": tiny_bert},
        tasks=["stsb"],
        glue_dir="g",
        variants=["none", "tft"],
        train_sizes=[8],
        paraphrase_corpus="corpus.jsonl",
    )


def shard_owning(spec, mine, theirs):
    """The first shard `(i, n)` that owns every run of `mine` and none of `theirs`."""
    return next(
        (i, n)
        for n in range(2, 20)
        for i in range(n)
        if all(ExperimentRunner(spec, shard=(i, n)).owns(run) for run in mine)
        and not any(ExperimentRunner(spec, shard=(i, n)).owns(run) for run in theirs)
    )


def test_a_run_that_a_grid_of_reuse_from_is_training_is_waited_for_not_trained_twice(
    tmp_path, tiny_bert
):
    theirs = one_run_grid(tmp_path / "theirs", tiny_bert, [])
    mine = dataclasses.replace(
        one_run_grid(tmp_path / "mine", tiny_bert, []), reuse_from=[theirs.output_dir]
    )
    (their_run,), (my_run,) = theirs.glue_runs({}), mine.glue_runs({})
    # A live process (this one) trains the run in the other grid.
    lock = RunLock(their_run.directory)
    assert lock.acquire()
    statuses = ExperimentRunner(mine, wait=False).run()
    assert statuses == {my_run.directory: "waiting"}
    assert not os.path.exists(my_run.directory)
    # A lock its dead owner left is no reason to wait.
    with subprocess.Popen(["true"]) as finished:
        finished.wait()
    lock.owner["pid"] = finished.pid
    with open(lock.path, "w") as handle:
        json.dump(lock.owner, handle)
    assert ExperimentRunner(mine, wait=False)._in_training_elsewhere(my_run) is None


def one_run_grid(directory, tiny_bert, extra_callbacks):
    """A grid of one short MRPC run, with `extra_callbacks` (the tests' `--include-package`)."""
    callbacks = Params.from_file(str(CONFIGS_ROOT / "glue/mrpc.jsonnet")).as_dict(quiet=True)
    callbacks = callbacks["trainer"]["callbacks"]
    return ExperimentSpec(
        output_dir=str(directory),
        base_models={"tiny": tiny_bert},
        tasks=["mrpc"],
        glue_dir=str(FIXTURES_ROOT / "glue"),
        variants=["none"],
        train_sizes=[8],
        seeds=[1],
        recipes={"paper": {"trainer.optimizer.lr": 1e-3}},
        glue_overrides={
            "trainer.num_epochs": 2,
            "data_loader.batch_size": 2,
            "trainer.callbacks": callbacks + extra_callbacks,
        },
        keep_weights=False,
        retries=1,
    )


def test_a_killed_run_resumes_from_its_checkpoint_and_ends_as_if_uninterrupted(
    tmp_path, tiny_bert, caplog
):
    # Registers `test_sigkill` (the runs are forked from this process).
    import tests.training.callbacks.sigkill  # noqa: F401

    def grid(name, extra_callbacks):
        return one_run_grid(tmp_path / name, tiny_bert, extra_callbacks)

    plain = grid("plain", [])
    # SIGKILL at the second epoch's first batch, after the first epoch's checkpoint; the retry
    # goes on from that checkpoint, so it is not killed again (the callback's marker survives).
    killed = grid("killed", [{"type": "test_sigkill", "epoch": 1, "batch": 1}])
    with forked_experiment_runs(), caplog.at_level(logging.INFO, "tft_experiments"):
        assert list(run_experiment(plain).values()) == ["done"]
        assert list(run_experiment(killed).values()) == ["done"]
    outcomes = [json.loads(line)["outcome"] for line in open(tmp_path / "killed/attempts.jsonl")]
    assert outcomes == ["failed", "done"]
    assert "Resuming" in caplog.text
    (expected,), (resumed,) = plain.glue_runs({}), killed.glue_runs({})
    assert os.path.exists(os.path.join(resumed.directory, "sigkill.done"))
    expected_metrics, resumed_metrics = glue_metrics(expected), glue_metrics(resumed)
    assert resumed_metrics["epoch"] == 1 and "validation_accuracy" in resumed_metrics
    keep = [key for key in expected_metrics if "duration" not in key and "memory" not in key]
    assert {key: resumed_metrics[key] for key in keep} == {
        key: expected_metrics[key] for key in keep
    }
    # One log for both attempts, the killed one first.
    log = open(os.path.join(resumed.directory, "train.log")).read()
    assert log.count("Beginning training.") == 2


def test_a_resumption_that_sigkill_ended_resumes_again_rather_than_start_from_scratch(
    tmp_path, tiny_bert, caplog
):
    # Registers `test_sigkill` (the runs are forked from this process).
    import tests.training.callbacks.sigkill  # noqa: F401

    # Killed in the second epoch, after the first epoch's checkpoint (a fresh attempt); then at
    # the next batch (the resumption, as an out-of-memory killer would); the third attempt must
    # resume again, not throw the first epoch away.
    kills = [
        {"type": "test_sigkill", "epoch": 1, "batch": 1},
        {"type": "test_sigkill", "epoch": 1, "batch": 2, "marker": "second.done"},
    ]
    killed = dataclasses.replace(one_run_grid(tmp_path / "killed", tiny_bert, kills), retries=2)
    with forked_experiment_runs(), caplog.at_level(logging.INFO, "tft_experiments"):
        assert list(run_experiment(killed).values()) == ["done"]
    outcomes = [json.loads(line)["outcome"] for line in open(tmp_path / "killed/attempts.jsonl")]
    assert outcomes == ["failed", "failed", "done"]
    assert caplog.text.count("Resuming") == 2 and caplog.text.count("Starting") == 1
    (run,) = killed.glue_runs({})
    log = open(os.path.join(run.directory, "train.log")).read()
    assert log.count("Beginning training.") == 3
    # Two epochs, each validated once: the first was not trained again.
    assert log.count("Validating") == 2


def test_a_signal_that_kills_a_finished_run_as_it_exits_leaves_it_done(tmp_path, tiny_bert):
    # Registers `test_sigkill` (the runs are forked from this process).
    import tests.training.callbacks.sigkill  # noqa: F401

    # A grid's stop comes as the run exits, after its metrics and archive are written and its
    # stop signals are no longer held: the signal kills the process, but the run had finished.
    late = one_run_grid(
        tmp_path / "late", tiny_bert, [{"type": "test_sigkill", "at": "exit", "signal": "SIGTERM"}]
    )
    (run,) = late.glue_runs({})
    with forked_experiment_runs():
        assert run_experiment(late) == {run.directory: "done"}
    outcomes = [json.loads(line)["outcome"] for line in open(tmp_path / "late/attempts.jsonl")]
    assert outcomes == ["done"]
    assert os.path.exists(os.path.join(run.directory, "sigkill.done"))
    assert "validation_accuracy" in glue_metrics(run)


def test_a_run_stopped_by_a_signal_stops_the_grid_and_the_next_invocation_resumes_it(
    tmp_path, tiny_bert
):
    # Registers `test_sigkill` (the runs are forked from this process).
    import tests.training.callbacks.sigkill  # noqa: F401

    plain = one_run_grid(tmp_path / "plain", tiny_bert, [])
    # SIGTERM to the run after the second epoch's first batch: it saves a checkpoint there and
    # stops; the harness neither retries it (retries=1) nor marks it failed.
    stopped = one_run_grid(
        tmp_path / "stopped",
        tiny_bert,
        [{"type": "test_sigkill", "epoch": 1, "batch": 1, "signal": "SIGTERM"}],
    )
    (expected,), (resumed,) = plain.glue_runs({}), stopped.glue_runs({})
    with forked_experiment_runs():
        assert list(run_experiment(plain).values()) == ["done"]
        with pytest.raises(RunStopped, match="stopped on SIGTERM"):
            run_experiment(stopped)
        assert os.path.exists(os.path.join(resumed.directory, "training_state_e1_b1.th"))
        assert not os.path.exists(resumed.directory + ".failed")
        assert list(run_experiment(stopped).values()) == ["done"]
    outcomes = [json.loads(line)["outcome"] for line in open(tmp_path / "stopped/attempts.jsonl")]
    assert outcomes == ["stopped", "done"]
    expected_metrics, resumed_metrics = glue_metrics(expected), glue_metrics(resumed)
    # The last epoch resumed after its first batch: AllenNLP's training_* metrics of that
    # epoch cover the batches trained after the resumption only (docs/recovery.md).
    keep = [
        key
        for key in expected_metrics
        if "duration" not in key and "memory" not in key and not key.startswith("training_")
    ]
    assert any(key.startswith("validation_") for key in keep)
    assert {key: resumed_metrics[key] for key in keep} == {
        key: expected_metrics[key] for key in keep
    }


def test_a_stopped_grid_reports_the_runs_that_finished_before_the_stop(tmp_path, tiny_bert):
    # Registers `test_sigkill` (the runs are forked from this process).
    import tests.training.callbacks.sigkill  # noqa: F401

    # Each run gets a SIGTERM at its first epoch's second batch, once (its marker stays) and
    # stops the grid: the first command stops in seed 1, the second finishes seed 1 and stops
    # in seed 2.
    kill = {"type": "test_sigkill", "epoch": 0, "batch": 1, "signal": "SIGTERM"}
    path = cli_spec(
        tmp_path,
        tiny_bert,
        seeds=[1, 2],
        glue_overrides={
            "trainer.num_epochs": 1,
            "data_loader.batch_size": 2,
            "trainer.callbacks": [kill],
        },
    )
    grid = tmp_path / "grid"
    stop = (
        "tft-experiment: stopped on SIGTERM; the runs in training saved a checkpoint, "
        "and the same command goes on from there"
    )
    with forked_experiment_runs():
        (first,) = forked_allennlp(["tft-experiment", path], as_program=True)
        assert first.returncode == 128 + 15, first.stderr[-3000:]
        assert first.stderr.strip().splitlines()[-1] == stop + "."
        assert not (grid / "results.md").exists()
        (second,) = forked_allennlp(["tft-experiment", path], as_program=True)
    assert second.returncode == 128 + 15, second.stderr[-3000:]
    report = ", ".join(
        str(grid / name) for name in ("runs.csv", "results.md", "scores.png", "paired.csv")
    )
    assert second.stderr.strip().splitlines()[-1] == f"{stop}; report of 1 finished runs: {report}."
    rows = list(csv.DictReader(open(grid / "runs.csv")))
    assert {(row["seed"], row["metric"]) for row in rows} == {
        ("1", metric) for metric in ("accuracy", "f1", "combined_score")
    }


def test_each_run_a_grid_finishes_is_logged_to_mlflow_without_changing_what_it_trains(
    tmp_path, tiny_bert
):
    from mlflow import MlflowClient

    path = cli_spec(tmp_path, tiny_bert, seeds=[1, 2])
    store = f"sqlite:///{tmp_path}/mlflow.db"
    with forked_experiment_runs():
        (result,) = forked_allennlp(["tft-experiment", path, "--mlflow", store])
    assert result.returncode == 0, result.stderr[-3000:]
    client = MlflowClient(store)
    experiment = client.get_experiment_by_name("spec")  # the spec file's name
    runs = client.search_runs([experiment.experiment_id], order_by=["tags.seed"])
    assert [run.data.tags["seed"] for run in runs] == ["1", "2"]
    for seed, logged in zip((1, 2), runs):
        relative = f"glue/tiny/none/paper/mrpc/n8/seed{seed}"
        directory = tmp_path / "grid" / relative
        assert logged.info.status == "FINISHED"
        assert logged.info.run_name == relative
        tags = logged.data.tags
        assert (tags["task"], tags["variant"], tags["train_size"], tags["base"]) == (
            "mrpc",
            "none",
            "8",
            "tiny",
        )
        assert (tags["strategy"], tags["recipe"], tags["run"]) == ("cross", "paper", relative)
        config = json.loads((directory / "config.json").read_text())
        assert "mlflow" not in json.dumps(config)  # tracking trains nothing otherwise
        assert logged.data.params["random_seed"] == str(seed)
        assert logged.data.params["trainer.num_epochs"] == "1"
        epoch = json.loads((directory / "metrics_epoch_0.json").read_text())
        history = client.get_metric_history(logged.info.run_id, "validation_accuracy")
        assert [(point.step, point.value) for point in history] == [
            (0, pytest.approx(epoch["validation_accuracy"]))
        ]
        final = json.loads((directory / "metrics.json").read_text())
        assert logged.data.metrics["best_validation_f1"] == pytest.approx(
            final["best_validation_f1"]
        )
        artifacts = {item.path for item in client.list_artifacts(logged.info.run_id)}
        assert artifacts == {"config.json", "metrics.json", "train.log"}


def test_only_a_checkpoint_of_the_same_config_is_resumed(tmp_path):
    (tmp_path / "run.jsonnet").write_text(
        "{model: {lr: 1e-4, name: std.extVar('NAME')}, trainer: {num_epochs: 2}}"
    )
    training = (str(tmp_path / "run.jsonnet"), {"trainer.num_epochs": 3}, {"NAME": "m"})
    run = tmp_path / "run"
    run.mkdir()
    assert not resumable(str(run), training)  # nothing there
    written = {"model": {"lr": 1e-4, "name": "m"}, "trainer": {"num_epochs": 3}}
    (run / "config.json").write_text(json.dumps(written))
    assert not resumable(str(run), training)  # no checkpoint: killed before one was saved
    (run / "training_state_e1_b0.th").write_bytes(b"")
    assert resumable(str(run), training)
    for changed in ({"trainer.num_epochs": 4}, {"trainer.num_epochs": 3, "model.lr": 2e-4}):
        assert not resumable(str(run), (training[0], changed, training[2]))
    assert not resumable(str(run), (*training[:2], {"NAME": "other"}))


def test_shard_arguments():
    assert parse_shard("2/5") == (2, 5)
    for text in ("5/5", "-1/2", "1", "a/b"):
        with pytest.raises(ValueError, match="--shard"):
            parse_shard(text)


def test_report_only_rewrites_the_outputs_without_running_anything(experiment):
    output = experiment.output_dir
    table = open(os.path.join(output, "results.md")).read()
    attempts = open(os.path.join(output, "attempts.jsonl")).read()
    spec = open(os.path.join(output, "spec.json")).read()
    for name in ("results.md", "runs.csv", "scores.png", "spec.json"):
        os.remove(os.path.join(output, name))
    report_files = ("runs.csv", "results.md", "scores.png", "paired.csv")
    (result,) = forked_allennlp(
        ["tft-experiment", os.path.join(output, "..", "spec.json"), "--report-only"]
    )
    assert result.returncode == 0, result.stderr[-2000:]
    # Nothing ran; the report names how many runs it reports: 2 variants x 2 seeds, each once
    # although it reports it under two recipes (the sweep chose the paper's, whose runs the
    # tuned recipe then shares).
    written = [os.path.join(output, name) for name in report_files]
    assert result.stdout == f"report of 4 finished runs: {', '.join(written)}\n"
    assert open(os.path.join(output, "results.md")).read() == table
    assert os.path.exists(os.path.join(output, "runs.csv")) and os.path.exists(
        os.path.join(output, "scores.png")
    )
    assert open(os.path.join(output, "attempts.jsonl")).read() == attempts
    assert open(os.path.join(output, "spec.json")).read() == spec  # the spec reported with


def test_a_grid_takes_the_runs_another_grid_finished_with_the_same_config(
    experiment, tmp_path, caplog
):
    caplog.set_level(logging.INFO, "tft_experiments")
    source = experiment.output_dir
    spec_values = {
        key: value for key, value in json.loads(experiment.dumps()).items() if key != "output_dir"
    }

    def grid(name, **values):
        spec = ExperimentSpec(
            output_dir=str(tmp_path / name), **{**spec_values, "reuse_from": [source], **values}
        )
        with forked_experiment_runs():
            statuses = run_experiment(spec)
        attempts = [json.loads(line) for line in open(tmp_path / name / "attempts.jsonl")]
        return spec, statuses, {a["directory"]: a["outcome"] for a in attempts}

    def distinct(spec):
        runs = [*spec.injection_runs(), *spec.sweep_runs(), *spec.glue_runs(tuned_choices(spec))]
        return {os.path.relpath(run.directory, spec.output_dir) for run in runs}

    # The same grid: every run is taken, none trained.
    same, statuses, outcomes = grid("same")
    assert outcomes == {relative: "reused" for relative in distinct(experiment)}
    assert set(statuses.values()) == {"done"}
    their_rows = rows_of(source)
    my_rows = rows_of(same.output_dir)
    for relative in outcomes:
        theirs, mine = os.path.join(source, relative), os.path.join(same.output_dir, relative)
        # The record of what ran is the other grid's, with where it came from.
        assert my_rows[relative] == {
            **their_rows[relative],
            "reused_from": source,
            "started": my_rows[relative]["started"],
            "ended": my_rows[relative]["ended"],
        }
        assert (
            open(os.path.join(mine, "config.json")).read()
            == open(os.path.join(theirs, "config.json")).read()
        )
        assert not [name for name in os.listdir(mine) if name.endswith((".th", ".tar.gz"))]
    # The injected encoder is hard-linked, not trained again.
    mine = os.path.join(same.output_dir, "injection/tiny/tft/encoder/model.safetensors")
    theirs = os.path.join(source, "injection/tiny/tft/encoder/model.safetensors")
    assert os.stat(mine).st_ino == os.stat(theirs).st_ino
    (injection,) = same.injection_runs()
    assert read_fingerprint(injection) == encoder_fingerprint(os.path.dirname(mine))
    assert collect_results(same) == [
        {**row, "directory": row["directory"].replace(source, same.output_dir)}
        for row in collect_results(experiment)
    ]

    # The injection taken from a grid that took it from the source, the fine-tunings from the
    # source: the same encoder (its origin is the source), so everything is taken again.
    middle = str(tmp_path / "middle")
    copy_run(source, "injection/tiny/tft", middle, encoder=True)
    _, _, outcomes = grid("chain", reuse_from=[middle, source])
    assert outcomes == {relative: "reused" for relative in distinct(experiment)}
    assert injection_origin(
        str(tmp_path / "chain/injection/tiny/tft"), str(tmp_path / "chain")
    ) == (os.path.realpath(source))

    # The source as a fresh machine has it (its encoder is not in git): its injection is not
    # finished there. Its record is taken (not the encoder), the fine-tunings of that encoder by
    # the fingerprint, and nothing is trained. With a fine-tuning seed the source did not run,
    # that fine-tuning needs the encoder: the injection is rebuilt here, to the encoder the
    # source recorded, then that seed's runs are trained.
    # Fine-tunings of another config under the same names are planned to be taken, are not, and
    # wait for the injection, rebuilt here.
    # Without its record (a grid made before records), nothing says which encoder the source
    # fine-tuned, so the injection and those fine-tunings run here.
    encoder = os.path.join(source, "injection/tiny/tft/encoder")
    table = os.path.join(source, TABLE)
    recorded_table = open(table).read()
    (injection_of_source,) = experiment.injection_runs()
    other_batches = {**spec_values["glue_overrides"], "data_loader.batch_size": 4}
    for name, hidden, values in (
        ("fresh", [encoder], {}),
        ("fresh_new_seed", [encoder], {"seeds": [1, 2, 3]}),
        ("fresh_other_config", [encoder], {"glue_overrides": other_batches, "seeds": [1]}),
        # Tuned recipes only: nothing needs the injection until the sweep (taken) has chosen.
        ("fresh_tuned_new_seed", [encoder], {"seeds": [1, 2, 3], "run_fixed_recipes": False}),
        ("fresh_unrecorded", [encoder], {}),
    ):
        for path in hidden:
            os.rename(path, path + ".away")
        if name == "fresh_unrecorded":
            record_encoder(injection_of_source, None)
        caplog.clear()
        try:
            spec, _, outcomes = grid(name, **values)
            attempts = [json.loads(line) for line in open(tmp_path / name / "attempts.jsonl")]
        finally:
            for path in hidden:
                os.rename(path + ".away", path)
            with open(table, "w") as handle:
                handle.write(recorded_table)
        expected = {relative: "reused" for relative in distinct(spec)}
        injection_attempts = ["reused"]
        if name in ("fresh_new_seed", "fresh_tuned_new_seed"):
            expected.update({r: "done" for r in distinct(spec) if r.endswith("seed3")})
            expected["injection/tiny/tft"] = "done"
            injection_attempts = ["reused", "done"]
            (rebuilt,) = spec.injection_runs()
            assert encoder_fingerprint(rebuilt.encoder) == read_fingerprint(injection)
        if name == "fresh_other_config":
            expected = {relative: "done" for relative in distinct(spec)}
            injection_attempts = ["reused", "done"]
            # Marked on disk, so that every process of the grid plans them to wait.
            marked = {
                r for r in distinct(spec) if os.path.exists(f"{tmp_path}/{name}/{r}.not_taken")
            }
            assert marked == {r for r in distinct(spec) if r.startswith("glue/tiny/tft/")}
            # Why a run the source finished ran again is said, with the key that differs.
            assert (
                f"Not reusing glue/tiny/none/paper/stsb/n8/seed1 from {source}: its config"
                " differs at data_loader.batch_size" in caplog.messages
            )
        else:
            assert not [m for m in caplog.messages if m.startswith("Not reusing")], name
        if name == "fresh_unrecorded":
            expected.update({r: "done" for r in expected if r.startswith("glue/tiny/tft/")})
            expected["injection/tiny/tft"] = "done"
            injection_attempts = ["done"]
        assert outcomes == expected, name
        assert [
            a["outcome"] for a in attempts if a["directory"] == "injection/tiny/tft"
        ] == injection_attempts, name
        if name == "fresh":
            assert not os.path.exists(os.path.join(spec.output_dir, "injection/tiny/tft/encoder"))

    # Another injection seed and a new fine-tuning seed: the injection and the fine-tunings of
    # its encoder run here (their GLUE configs are the same, their encoder is not), and so do
    # the base model's runs of seed 3; the base model's runs of seed 1 and the sweep are taken.
    other, _, outcomes = grid("other", injection_seeds=[2], seeds=[1, 3])
    sweep = {f"glue/tiny/none/{candidate}/stsb/n8/seed1" for candidate in ("paper", "lr0.003")}
    assert {relative for relative, outcome in outcomes.items() if outcome == "reused"} == sweep
    trained = {relative for relative, outcome in outcomes.items() if outcome == "done"}
    assert "injection/tiny/tft" in trained and trained == distinct(other) - sweep
    # Of seed 1, only the fine-tunings of the injected encoder ran again.
    again = {relative for relative in trained if relative.endswith("seed1")}
    assert again and {relative.split("/")[2] for relative in again} == {"tft"}
    # A grid whose injection recorded another encoder than the source's (a record taken alone
    # from a grid built on another machine's CPU) and none of whose fine-tunings used it: the
    # injection runs here and exports the source's encoder, which replaces the record; then
    # every fine-tuning is taken from the source. (With a finished fine-tuning of the recorded
    # encoder, the rebuild fails instead: test_an_injection_runs_again_only_...)
    their_row = rows_of(source)["injection/tiny/tft"]
    append_row(str(tmp_path / "recorded"), {**their_row, "encoder_sha256": "1" * 64})
    spec, statuses, outcomes = grid("recorded")
    assert outcomes == {
        **{relative: "reused" for relative in distinct(experiment)},
        "injection/tiny/tft": "done",
    }
    assert set(statuses.values()) == {"done"}
    assert read_fingerprint(next(spec.injection_runs())) == read_fingerprint(injection)
    with pytest.raises(ConfigurationError, match="own output_dir"):
        ExperimentSpec(output_dir=source, **{**spec_values, "reuse_from": [source + "/"]})


def rows_of(grid):
    """The rows of the table of `grid`, by directory (the last line of each)."""
    return {row["directory"]: row for row in map(json.loads, open(os.path.join(grid, TABLE)))}


def test_configs_are_compared_with_the_other_grids_paths_read_as_this_ones():
    mine = {
        "model": {"model_name": "/b/injection/tiny/tft/encoder", "lr": 1e-4},
        "train_data_path": "/data/train.tsv",
        "trainer": {"callbacks": [{"type": "tft_rng_checkpoint"}]},
    }
    theirs = {
        "model": {"model_name": "/a/injection/tiny/tft/encoder", "lr": 1e-4},
        "train_data_path": "/data/train.tsv",
        "trainer": {"callbacks": [{"type": "tft_rng_checkpoint"}]},
    }
    assert config_difference(mine, theirs, "/a", "/b") is None
    # A path outside the other grid is compared as it is.
    assert config_difference(mine, theirs, "/data", "/b") == "model.model_name"
    other_lr = {**theirs, "model": {**theirs["model"], "lr": 2e-4}}
    assert config_difference(mine, other_lr, "/a", "/b") == "model.lr"
    assert config_difference(mine, {**theirs, "extra": 1}, "/a", "/b") == "extra"
    fewer = {**theirs, "trainer": {"callbacks": []}}
    assert config_difference(mine, fewer, "/a", "/b") == "trainer.callbacks"


def test_only_a_finished_run_with_the_same_trained_config_is_reusable(tmp_path):
    run = InjectionRun("tiny", "tft", str(tmp_path / "b/injection/tiny/tft"))
    config = {"model": {"lr": 1e-4}, "trainer": {"callbacks": [{"type": "tft_rng_checkpoint"}]}}
    theirs = tmp_path / "a/injection/tiny/tft"
    theirs.mkdir(parents=True)
    # A callback that only writes a record is not compared; any other is.
    recorded = [{"type": "tft_rng_checkpoint"}, {"type": "tft_parameter_counts"}]
    (theirs / "config.json").write_text(json.dumps({**config, "trainer": {"callbacks": recorded}}))
    (theirs / "metrics.json").write_text("{}")
    grids = [str(tmp_path / "a")]
    # An injection without its exported encoder is not finished, so not reusable.
    assert find_reusable(run, config, str(tmp_path / "b"), grids) is None
    (theirs / "encoder").mkdir()
    (theirs / "encoder/config.json").write_text("{}")
    assert find_reusable(run, config, str(tmp_path / "b"), grids) == grids[0]
    other = {**config, "trainer": {"callbacks": [{"type": "tft_recover_finished_run"}]}}
    differences: list = []
    assert find_reusable(run, other, str(tmp_path / "b"), grids, differences) is None
    # The grid that finished it with another config is named, with the first key that differs.
    assert differences == [(grids[0], "trainer.callbacks.0.type")]


def test_a_run_made_before_archives_held_their_encoder_files_is_reusable(tmp_path):
    run = InjectionRun("tiny", "tft", str(tmp_path / "b/injection/tiny/tft"))
    theirs = tmp_path / "a/injection/tiny/tft"
    (theirs / "encoder").mkdir(parents=True)
    (theirs / "encoder/config.json").write_text("{}")
    (theirs / "metrics.json").write_text("{}")

    def reader(kind, lr=None):
        return {
            "tokenizer": {"type": kind, "model_name": "m", "add_special_tokens": False},
            "token_indexers": {"tokens": {"type": kind, "model_name": "m"}},
            **({} if lr is None else {"lr": lr}),
        }

    old = {"dataset_reader": reader("pretrained_transformer"), "model": {"lr": 1e-4}}
    (theirs / "config.json").write_text(json.dumps(old))
    grids = [str(tmp_path / "a")]
    new = {
        "dataset_reader": reader("tft_pretrained_transformer"),
        "include_in_archive": ["pretrained_transformers"],
        "model": {"lr": 1e-4},
    }
    assert find_reusable(run, new, str(tmp_path / "b"), grids) == grids[0]
    # Everything else is still compared, inside the reader too.
    other = {**new, "dataset_reader": reader("tft_pretrained_transformer", lr=1)}
    assert find_reusable(run, other, str(tmp_path / "b"), grids) is None
    other = {**new, "dataset_reader": reader("whitespace")}
    assert find_reusable(run, other, str(tmp_path / "b"), grids) is None


def test_a_run_whose_config_declared_its_task_labels_is_reusable(tmp_path):
    run = InjectionRun("tiny", "tft", str(tmp_path / "b/injection/tiny/tft"))
    theirs = tmp_path / "a/injection/tiny/tft"
    (theirs / "encoder").mkdir(parents=True)
    (theirs / "encoder/config.json").write_text("{}")
    (theirs / "metrics.json").write_text("{}")
    grids = [str(tmp_path / "a")]

    def config(task, **vocabulary):
        return {"vocabulary": {"type": "from_instances", **vocabulary}, "model": {"task": task}}

    # Before, the configs declared each task's labels; now the model adds them itself.
    for task, labels in [("mrpc", ["0", "1"]), ("stsb", []), ("rte", RTE_LABELS)]:
        (theirs / "config.json").write_text(
            json.dumps(config(task, tokens_to_add={"labels": labels}))
        )
        assert find_reusable(run, config(task), str(tmp_path / "b"), grids) == grids[0]
    # Labels in another order, or another namespace, make another vocabulary.
    for vocabulary in [{"labels": ["1", "0"]}, {"labels": ["0", "1"], "tags": ["x"]}]:
        (theirs / "config.json").write_text(json.dumps(config("mrpc", tokens_to_add=vocabulary)))
        assert find_reusable(run, config("mrpc"), str(tmp_path / "b"), grids) is None


RTE_LABELS = ["entailment", "not_entailment"]


def test_metric_epoch_best_reports_the_best_epochs_scores(tmp_path):
    spec = ExperimentSpec(
        output_dir=str(tmp_path),
        base_models={"b": "m"},
        tasks=["rte"],
        glue_dir="g",
        variants=["none"],
        metric_epoch="best",
    )
    (run,) = spec.glue_runs({})
    os.makedirs(run.directory)
    with open(os.path.join(run.directory, "metrics.json"), "w") as handle:
        json.dump(
            {
                "validation_accuracy": 0.5,
                "best_validation_accuracy": 0.75,
                "best_validation_loss": 0.3,
                "validation_loss": 0.4,
                "best_epoch": 1,
            },
            handle,
        )
    assert [row["accuracy"] for row in collect_results(spec)] == [0.75]
    spec.metric_epoch = "last"
    assert [row["accuracy"] for row in collect_results(spec)] == [0.5]


def tiny_strategy_spec(output_dir, **values):
    return ExperimentSpec(
        **{
            "output_dir": str(output_dir),
            "base_models": {"b": "m"},
            "tasks": ["sst2", "mrpc", "stsb"],
            "glue_dir": "g",
            "variants": ["none"],
            "train_sizes": [8],
            **values,
        }
    )


def test_strategies_expand_the_grid_and_skip_the_tasks_they_do_not_apply_to(tmp_path):
    spec = tiny_strategy_spec(
        tmp_path,
        strategies=["cross", "multitask_shuffled", "siamese_softmax", "siamese_cosine_mse"],
        sweep={"trainer.optimizer.lr": [1e-3]},
    )
    # The sweep tunes the cross-encoder only, as without strategies.
    assert {run.strategy for run in spec.sweep_runs()} == {"cross"}
    choices = {
        ("b", "none", "cross", "sst2", 8): "lr0.001",
        ("b", "none", "cross", "mrpc", 8): "lr0.001",
        ("b", "none", "cross", "stsb", 8): "paper",
    }
    runs = list(spec.glue_runs(choices))
    listed = [
        (run.recipe, run.task, run.strategy, os.path.relpath(run.directory, str(tmp_path)))
        for run in runs
    ]
    multitask = "multitask_shuffled/sst2+mrpc+stsb/n8/seed1"
    assert listed == [
        ("tuned", "sst2", "cross", "glue/b/none/lr0.001/sst2/n8/seed1"),
        ("tuned", "sst2", "multitask_shuffled", f"glue/b/none/lr0.001/{multitask}"),
        ("tuned", "mrpc", "cross", "glue/b/none/lr0.001/mrpc/n8/seed1"),
        ("tuned", "mrpc", "multitask_shuffled", f"glue/b/none/lr0.001/{multitask}"),
        ("tuned", "mrpc", "siamese_softmax", "glue/b/none/lr0.001/siamese_softmax/mrpc/n8/seed1"),
        ("tuned", "stsb", "cross", "glue/b/none/paper/stsb/n8/seed1"),
        # STS-B chose another recipe than SST-2 and MRPC: its multitask run is one of its own.
        ("tuned", "stsb", "multitask_shuffled", f"glue/b/none/paper/{multitask}"),
        ("tuned", "stsb", "siamese_softmax", "glue/b/none/paper/siamese_softmax/stsb/n8/seed1"),
        (
            "tuned",
            "stsb",
            "siamese_cosine_mse",
            "glue/b/none/paper/siamese_cosine_mse/stsb/n8/seed1",
        ),
        ("paper", "sst2", "cross", "glue/b/none/paper/sst2/n8/seed1"),
        ("paper", "sst2", "multitask_shuffled", f"glue/b/none/paper/{multitask}"),
        ("paper", "mrpc", "cross", "glue/b/none/paper/mrpc/n8/seed1"),
        ("paper", "mrpc", "multitask_shuffled", f"glue/b/none/paper/{multitask}"),
        ("paper", "mrpc", "siamese_softmax", "glue/b/none/paper/siamese_softmax/mrpc/n8/seed1"),
        ("paper", "stsb", "cross", "glue/b/none/paper/stsb/n8/seed1"),
        ("paper", "stsb", "multitask_shuffled", f"glue/b/none/paper/{multitask}"),
        ("paper", "stsb", "siamese_softmax", "glue/b/none/paper/siamese_softmax/stsb/n8/seed1"),
        (
            "paper",
            "stsb",
            "siamese_cosine_mse",
            "glue/b/none/paper/siamese_cosine_mse/stsb/n8/seed1",
        ),
    ]
    (mrpc,) = [
        run
        for run in runs
        if (run.recipe, run.task, run.strategy) == ("paper", "mrpc", "multitask_shuffled")
    ]
    assert mrpc.tasks == ("sst2", "mrpc", "stsb")
    assert mrpc.config == str(tmp_path / "configs/multitask_shuffled_sst2+mrpc+stsb.jsonnet")
    # Without `strategies`, the grid is the cross-encoders' in the directories it always had.
    old = tiny_strategy_spec(tmp_path, tasks=["rte"], train_sizes=[None])
    assert [(run.strategy, run.directory, run.config) for run in old.glue_runs({})] == [
        (
            "cross",
            str(tmp_path / "glue/b/none/paper/rte/nall/seed1"),
            str(PROJECT_ROOT / "tft_allennlp/training_configs/glue/rte.jsonnet"),
        )
    ]
    with pytest.raises(ConfigurationError, match="siamese_triplet"):
        tiny_strategy_spec(tmp_path, strategies=["cross", "siamese_triplet"])
    # A multitask run shares the label namespace: RTE's labels do not go with MRPC's.
    with pytest.raises(ConfigurationError, match="same labels"):
        tiny_strategy_spec(tmp_path, tasks=["rte", "mrpc"], strategies=["multitask_sequential"])


def test_generated_strategy_configs_are_the_shipped_ones(tmp_path):
    """A strategy's generated config equals the hand-written config of the same setting."""
    spec = tiny_strategy_spec(
        tmp_path,
        strategies=[
            "siamese_softmax",
            "siamese_cosine_mse",
            "multitask_sequential",
            "adapters_houlsby",
            "adapters_not_shared",
            "adapters_three_shared",
            "lora",
            "smart",
        ],
    )
    shipped = {
        ("siamese_softmax", "mrpc"): "siamese/mrpc_softmax.jsonnet",
        ("siamese_cosine_mse", "stsb"): "siamese/stsb_cosine.jsonnet",
        ("multitask_sequential", "sst2"): "multitask/sst2_mrpc_stsb_sequential.jsonnet",
        ("adapters_houlsby", "mrpc"): "adapters/mrpc_houlsby.jsonnet",
        ("adapters_not_shared", "mrpc"): "adapters/mrpc_not_shared.jsonnet",
        ("adapters_three_shared", "mrpc"): "adapters/mrpc_three_shared.jsonnet",
        ("lora", "stsb"): "lora/stsb.jsonnet",
        ("smart", "stsb"): "smart/stsb.jsonnet",
    }
    for run in spec.glue_runs({}):
        if (run.strategy, run.task) in shipped:
            path = tmp_path / os.path.basename(run.config)
            path.write_text(run.config_text)
            expected = PROJECT_ROOT / "training_configs" / shipped.pop((run.strategy, run.task))
            assert (
                Params.from_file(str(path)).as_dict() == Params.from_file(str(expected)).as_dict()
            )
    assert not shipped


def test_multitask_overrides_go_to_every_tasks_reader():
    overrides = {
        "dataset_reader.train_size": 8,
        "dataset_reader.seed": 2,
        "validation_dataset_reader.max_length": 64,
        "data_loader.batch_size": 4,
        "trainer.optimizer.lr": 1e-4,
    }
    assert multitask_overrides(overrides, ("mrpc", "stsb")) == {
        "dataset_reader.readers.mrpc.train_size": 8,
        "dataset_reader.readers.stsb.train_size": 8,
        "dataset_reader.readers.mrpc.seed": 2,
        "dataset_reader.readers.stsb.seed": 2,
        "validation_dataset_reader.readers.mrpc.max_length": 64,
        "validation_dataset_reader.readers.stsb.max_length": 64,
        "data_loader.scheduler.batch_size": 4,
        "trainer.optimizer.lr": 1e-4,
    }


def test_a_grid_of_strategies_runs_and_reports_each_task_under_each_strategy(tmp_path, tiny_bert):
    spec = ExperimentSpec(
        output_dir=str(tmp_path / "out"),
        base_models={"tiny": tiny_bert},
        tasks=["mrpc", "stsb"],
        glue_dir=str(FIXTURES_ROOT / "glue"),
        variants=["none"],
        train_sizes=[8],
        seeds=[1],
        strategies=["cross", "multitask_shuffled", "siamese_softmax", "adapters_houlsby"],
        recipes={"paper": {"trainer.optimizer.lr": 1e-3}},
        glue_overrides={"trainer.num_epochs": 1},
        keep_weights=False,
        strategy_overrides={"adapters_houlsby": {"trainer.num_epochs": 2}},
    )
    with forked_experiment_runs():
        statuses = run_experiment(spec)
    # One multitask run serves both tasks: 2 cross-encoders + 1 multitask + 2 Siamese + 2 with
    # adapters.
    assert sorted(statuses.values()) == ["done"] * 7
    write_outputs(spec)
    rows = collect_results(spec)
    assert [(row["strategy"], row["task"]) for row in rows] == [
        (strategy, task)
        for task in ("mrpc", "stsb")
        for strategy in ("cross", "multitask_shuffled", "siamese_softmax", "adapters_houlsby")
    ]
    multitask = {row["task"]: row for row in rows if row["strategy"] == "multitask_shuffled"}
    directory = os.path.join(spec.output_dir, multitask["mrpc"]["directory"])
    metrics = json.loads(open(os.path.join(directory, "metrics.json")).read())
    for task, names in {"mrpc": ("accuracy", "f1"), "stsb": ("pearson", "spearman")}.items():
        for name in (*names, "combined_score"):
            assert multitask[task][name] == metrics[f"validation_{task}_{name}"]
    config = json.loads(open(os.path.join(directory, "config.json")).read())
    assert config["data_loader"]["scheduler"]["type"] == "tft_shuffled"
    for task in ("mrpc", "stsb"):
        # The subsample of every task is the single-task runs' (same size, same seed).
        reader = config["dataset_reader"]["readers"][task]
        assert (reader["train_size"], reader["seed"]) == (8, 1)
    siamese = json.loads(
        open(os.path.join(spec.output_dir, rows[2]["directory"], "config.json")).read()
    )
    assert siamese["model"]["type"] == "tft_siamese_pair_classifier"
    assert siamese["dataset_reader"]["train_size"] == 8
    # The recipe's lr, except for the adapters, which keep theirs; only they freeze the encoder.
    # The spec gives the adapters 2 epochs, every other strategy 1.
    lrs, trained, epochs = {}, {}, {}
    for row in rows[:4]:
        directory = os.path.join(spec.output_dir, row["directory"])
        config = json.loads(open(os.path.join(directory, "config.json")).read())
        lrs[row["strategy"]] = config["trainer"]["optimizer"]["lr"]
        trained[row["strategy"]] = row["trainable_parameters"]
        epochs[row["strategy"]] = config["trainer"]["num_epochs"]
    assert epochs == {
        "cross": 1,
        "multitask_shuffled": 1,
        "siamese_softmax": 1,
        "adapters_houlsby": 2,
    }
    assert lrs == {
        "cross": 1e-3,
        "multitask_shuffled": 1e-3,
        "siamese_softmax": 1e-3,
        "adapters_houlsby": 3e-4,
    }
    # Tiny BERT, d = 32: 2 layers x one adapter of 2 * 64 * 32 + 32 + 64, and the classifier.
    assert trained["adapters_houlsby"] == 2 * (2 * 64 * 32 + 32 + 64) + 2 * 32 + 2
    # Full fine-tuning trains the whole checkpoint but its pooler, and the classifier.
    bert = AutoModel.from_pretrained(tiny_bert)
    encoder = sum(p.numel() for name, p in bert.named_parameters() if "pooler" not in name)
    assert trained["cross"] == encoder + 2 * 32 + 2
    with open(os.path.join(spec.output_dir, "runs.csv")) as handle:
        written = list(csv.DictReader(handle))
    # Per row: 2 metrics, their combined score, the trained parameters.
    assert list(written[0])[-1] == "strategy" and len(written) == 8 * 4
    assert {(row["strategy"], row["task"]) for row in written} == {
        (row["strategy"], row["task"]) for row in rows
    }
    table = open(os.path.join(spec.output_dir, "results.md")).read().splitlines()
    assert (
        "| train size | strategy | variant | MRPC Acc | MRPC F1 | STSB Pearson | STSB Spearman "
        "| trained parameters |" in table
    )
    for strategy in ("cross", "multitask_shuffled", "siamese_softmax", "adapters_houlsby"):
        (line,) = [line for line in table if line.startswith(f"| 8 | {strategy} | none |")]
        assert "" not in [cell.strip() for cell in line.split("|")[4:-1]]


def test_strategy_overrides_name_strategies_of_the_grid(tmp_path):
    with pytest.raises(ConfigurationError, match=r"does not run: \['smart'\]"):
        ExperimentSpec(
            output_dir=str(tmp_path),
            base_models={"b": "m"},
            tasks=["rte"],
            glue_dir="g",
            strategy_overrides={"smart": {"trainer.num_epochs": 3}},
        )


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
    cells = len(spec.tasks) * len(spec.train_sizes) * len(spec.base_models)
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


def test_a_run_whose_harness_dies_stops_at_its_batch_and_the_next_harness_records_the_loss(
    tmp_path, tiny_bert
):
    # The harness as users start it (a new interpreter, its runs too), in a folder whose
    # `.allennlp_plugins` registers `test_sigkill` in the runs. At the second epoch's first
    # batch the run SIGKILLs the harness: the run gets a SIGTERM and stops with a checkpoint,
    # instead of training on while the next harness, finding the claim dead, trains it too.
    import tests.training.callbacks.sigkill  # noqa: F401

    spec = one_run_grid(
        tmp_path / "grid",
        tiny_bert,
        [{"type": "test_sigkill", "epoch": 1, "batch": 1, "signal": "SIGKILL", "parent": True}],
    )
    (run,) = spec.glue_runs({})
    (tmp_path / "spec.json").write_text(spec.dumps())
    (tmp_path / ".allennlp_plugins").write_text("tft_allennlp\ntests.training.callbacks.sigkill\n")
    path = os.pathsep.join(filter(None, [str(PROJECT_ROOT), os.environ.get("PYTHONPATH")]))
    command = [
        sys.executable,
        "-m",
        "allennlp",
        "tft-experiment",
        "spec.json",
        "--poll-seconds",
        "1",
    ]
    environment = {**os.environ, "PYTHONPATH": path}
    with subprocess.Popen(
        command, cwd=tmp_path, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as harness:
        _, errors = harness.communicate(timeout=600)
    assert harness.returncode == -9, errors[-3000:]
    log = run.directory + ".log"
    deadline = time.monotonic() + 120
    while "SIGTERM: stopped at epoch 1" not in open(log).read():
        assert time.monotonic() < deadline, "the run trained on without its harness"
        time.sleep(0.5)
    # Its last output written, the run exits.
    while subprocess.run(["pgrep", "-f", run.directory], capture_output=True).returncode == 0:
        assert time.monotonic() < deadline, "the stopped run did not exit"
        time.sleep(0.2)
    stopped = time.time()
    time.sleep(1)  # the takeover comes later than the run's last output
    checkpoints = [
        name for name in os.listdir(run.directory) if name.startswith("training_state_e1")
    ]
    assert checkpoints and "metrics.json" not in os.listdir(run.directory)
    claimed = os.path.getmtime(run.directory + ".lock")

    with forked_experiment_runs():
        assert run_experiment(spec) == {run.directory: "done"}
    lost, done = [json.loads(line) for line in open(tmp_path / "grid/attempts.jsonl")]
    assert (lost["outcome"], lost["pid"], lost["shard"]) == ("lost", harness.pid, None)
    # The kind of CPU of the attempt that ran here; not known of one that died elsewhere.
    cpuinfo = open("/proc/cpuinfo").read()
    family, model = (
        re.search(rf"^{key}\s*: (\d+)$", cpuinfo, re.M).group(1) for key in ("cpu family", "model")
    )
    vendor = re.search(r"^vendor_id\s*: (\S+)$", cpuinfo, re.M).group(1)
    assert (lost["cpu"], done["cpu"]) == (None, f"{vendor} {family}/{model}")
    assert lost["started"] == round(claimed, 1) <= lost["ended"] <= round(stopped, 1)
    assert done["outcome"] == "done"
    assert "Resuming" in open(os.path.join(run.directory, "train.log")).read()


def cli_spec(directory, tiny_bert, **values):
    """Writes `directory/spec.json`, a grid of one MRPC run in `directory/grid`; its path."""
    spec = {
        "output_dir": str(directory / "grid"),
        "base_models": {"tiny": tiny_bert},
        "tasks": ["mrpc"],
        "glue_dir": str(FIXTURES_ROOT / "glue"),
        "variants": ["none"],
        "train_sizes": [8],
        "glue_overrides": {"trainer.num_epochs": 1, "data_loader.batch_size": 8},
        "keep_weights": False,
        **values,
    }
    path = directory / "spec.json"
    path.write_text(json.dumps(spec))
    return str(path)


def grid_files(directory):
    return {
        str(path.relative_to(directory)): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def test_a_changed_spec_that_would_report_finished_runs_as_its_own_is_refused(tmp_path, tiny_bert):
    path = cli_spec(tmp_path, tiny_bert)
    spec = ExperimentSpec.from_file(path)
    os.makedirs(spec.output_dir)
    (tmp_path / "grid/spec.json").write_text(spec.dumps())
    (run,) = spec.glue_runs()
    os.makedirs(run.directory)  # finished, as far as the grid can tell
    metrics = {"validation_accuracy": 0.5, "validation_f1": 0.5, "validation_combined_score": 0.5}
    (
        tmp_path / "grid" / os.path.relpath(run.directory, spec.output_dir) / "metrics.json"
    ).write_text(json.dumps(metrics))
    before = grid_files(tmp_path / "grid")
    cli_spec(tmp_path, tiny_bert, glue_overrides={"trainer.num_epochs": 2})
    refusal = (
        f"tft-experiment: {path}: 'glue_overrides' differs from the spec that output_dir "
        f"{spec.output_dir} ran with: 1 finished run would train otherwise "
        "(glue/tiny/none/paper/mrpc/n8/seed1); give another output_dir (its reuse_from may name "
        f"{spec.output_dir} to take the runs that stay the same), or "
    )
    remedies = {
        (): "--force to train them again there",
        ("--report-only",): "run it without --report-only and with --force to train them again",
        ("--report-only", "--force"): (
            "run it without --report-only and with --force to train them again"
        ),
    }
    for flags, remedy in remedies.items():
        (result,) = forked_allennlp(["tft-experiment", path, *flags])
        assert result.returncode == 1
        assert result.stderr.strip().splitlines()[-1] == refusal + remedy
        assert grid_files(tmp_path / "grid") == before

    # More seeds change no finished run: the report goes on (saying so, `changes_test.py`).
    cli_spec(tmp_path, tiny_bert, seeds=[1, 2])
    (result,) = forked_allennlp(["tft-experiment", path, "--report-only"])
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith("report of 1 finished runs:")
    assert json.loads((tmp_path / "grid/spec.json").read_text())["seeds"] == [1, 2]
    history = (tmp_path / "grid/spec_history.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in history] == [json.loads(before["spec.json"])]


CUSTOM_PAIRS = {
    "task": {"sentence1": "first", "sentence2": "second", "label": "verdict", "labels": ["s", "d"]},
    "train_data_path": "TMP/data/train.tsv",
    "validation_data_path": "TMP/data/dev.tsv",
}


@pytest.mark.parametrize(
    "values, error",
    [
        (
            {"train_sizes": [8, -8]},
            "'train_sizes' must hold positive integers (or null, the whole training file), not -8.",
        ),
        ({"tasks": []}, "'tasks' is empty: name at least one task to fine-tune on."),
        (
            {"tasks": ["pairs"], "custom_tasks": {"pairs": CUSTOM_PAIRS}},
            "custom_tasks['pairs'].train_data_path: TMP/data/train.tsv: No such file or directory",
        ),
    ],
    ids=["a negative size", "no task", "a custom task without its files"],
)
def test_a_spec_found_wrong_is_one_line_and_starts_no_run(tmp_path, tiny_bert, values, error):
    values = json.loads(json.dumps(values).replace("TMP", str(tmp_path)))
    path = cli_spec(tmp_path, tiny_bert, **values)
    (result,) = forked_allennlp(["tft-experiment", path], as_program=True)
    assert result.returncode == 1
    expected = f"tft-experiment: {path}: {error.replace('TMP', str(tmp_path))}"
    assert result.stderr.strip().splitlines() == [expected]
    assert not (tmp_path / "grid").exists()


def test_force_trains_again_the_finished_runs_a_changed_spec_changes(tmp_path, tiny_bert):
    path = cli_spec(tmp_path, tiny_bert)
    first_spec = ExperimentSpec.from_file(path)
    (run,) = first_spec.glue_runs()
    with forked_experiment_runs():
        (first,) = forked_allennlp(["tft-experiment", path], as_program=True)
        assert first.returncode == 0, first.stderr[-3000:]
        trained = os.path.getmtime(os.path.join(run.directory, "metrics.json"))
        cli_spec(tmp_path, tiny_bert, glue_overrides={"trainer.num_epochs": 1})
        (forced,) = forked_allennlp(["tft-experiment", path, "--force"])
    assert forced.returncode == 0, forced.stderr[-3000:]
    assert forced.stdout.startswith("runs: 1 done;")
    assert (
        f"{first_spec.output_dir}/spec.json: the spec changed ('glue_overrides'): training 1 "
        "finished run again with it (--force)."
    ) in forced.stderr
    # Trained again with the new spec: the config's batch size is the default 32, not 8.
    config = json.loads(open(os.path.join(run.directory, "config.json")).read())
    assert config["data_loader"]["batch_size"] == 32
    assert os.path.getmtime(os.path.join(run.directory, "metrics.json")) > trained
    attempts = [json.loads(line) for line in open(tmp_path / "grid/attempts.jsonl")]
    assert [attempt["outcome"] for attempt in attempts] == ["done", "done"]
    recorded = json.loads((tmp_path / "grid/spec.json").read_text())
    assert recorded["glue_overrides"] == {"trainer.num_epochs": 1}
    history = (tmp_path / "grid/spec_history.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in history] == [json.loads(first_spec.dumps())]
