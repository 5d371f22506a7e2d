import json
import os

import pytest
import torch
from safetensors.torch import save_file

from tft_experiments import ExperimentSpec, collect_results, tuned_choices
from tft_experiments.outcomes import (
    encoder_fingerprint,
    is_finished,
    read_metrics,
    read_metrics_file,
    tuned_choice,
)


def test_a_damaged_metrics_file_is_named_and_its_run_unfinished(tmp_path, caplog):
    """An empty metrics.json made tft-experiment raise a JSONDecodeError naming no file."""
    spec = ExperimentSpec(
        output_dir=str(tmp_path),
        base_models={"b": "m"},
        tasks=["rte"],
        glue_dir="g",
        variants=["none"],
    )
    (run,) = spec.glue_runs({})
    os.makedirs(run.directory)
    path = os.path.join(run.directory, "metrics.json")
    for text in ("", '{"best_epoch": 1, "valid', "[1, 2]"):
        with open(path, "w") as handle:
            handle.write(text)
        caplog.clear()
        assert read_metrics(run, "last") is None and not is_finished(run)
        assert f"{path}: damaged (" in caplog.text
        assert "its run counts as unfinished" in caplog.text
    assert read_metrics_file(str(tmp_path / "missing.json")) is None
    with open(path, "w") as handle:
        json.dump({"validation_accuracy": 0.5, "validation_loss": 0.7}, handle)
    assert read_metrics(run, "last") == {"accuracy": 0.5}


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
