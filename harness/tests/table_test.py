"""
The table of finished runs (`runs.jsonl`): what a row holds, and a grid resumed from it alone,
without its run directories (a fresh machine, with the grid's files from git), on its own and
through another grid's `reuse_from`.
"""

import json
import os
import shutil

import pytest

from tests import FIXTURES_ROOT
from tests.allennlp_cli import forked_experiment_runs
from tft_experiments import ExperimentRunner, ExperimentSpec, tuned_choices
from tft_experiments.commands.experiment import run_experiment, write_outputs
from tft_experiments.outcomes import encoder_fingerprint, is_finished, read_fingerprint
from tft_experiments.runs import grid_of
from tft_experiments.table import (
    TABLE,
    append_row,
    finished_row,
    forget_runs,
    read_table,
)
from tft_experiments.trained_configs import config_fingerprint

REPORT = ("results.md", "runs.csv", "paired.csv", "scores.png")


def tiny_grid(output_dir, tiny_bert, **values):
    """STS-B at 8 pairs, `none` and `tft`, one epoch; a sweep of two learning rates."""
    split = {
        "dataset_reader.validation_fraction": 0.25,
        "validation_dataset_reader.validation_fraction": 0.25,
    }
    settings = dict(
        output_dir=str(output_dir),
        base_models={"tiny": tiny_bert},
        variants=["none", "tft"],
        tasks=["stsb"],
        train_sizes=[8],
        seeds=[1],
        glue_dir=str(FIXTURES_ROOT / "glue"),
        glue_overrides={"trainer.num_epochs": 1, "data_loader.batch_size": 2},
        sweep={"trainer.optimizer.lr": [3e-3]},
        keep_weights=False,
        paraphrase_corpus=str(FIXTURES_ROOT / "paraphrase/aligned.jsonl"),
        injection_overrides={"trainer.num_epochs": 1, **split},
    )
    return ExperimentSpec(**{**settings, **values})


def distinct(spec):
    runs = [*spec.injection_runs(), *spec.sweep_runs(), *spec.glue_runs(tuned_choices(spec))]
    return {grid_of(run)[1] for run in runs}


def attempts(spec):
    with open(os.path.join(spec.output_dir, "attempts.jsonl")) as handle:
        return [json.loads(line) for line in handle]


def report(spec):
    write_outputs(spec)
    return {name: open(os.path.join(spec.output_dir, name), "rb").read() for name in REPORT}


def fresh_machine(spec):
    """Leaves of the grid what git keeps: no run directory, no encoder."""
    for kind in ("glue", "injection"):
        shutil.rmtree(os.path.join(spec.output_dir, kind))


@pytest.fixture(scope="module")
def finished(tmp_path_factory, tiny_bert):
    """The tiny grid run to its end, and its report."""
    spec = tiny_grid(tmp_path_factory.mktemp("table") / "grid", tiny_bert)
    with forked_experiment_runs():
        statuses = run_experiment(spec)
    assert set(statuses.values()) == {"done"}
    return spec, report(spec)


def test_a_finished_run_is_a_row_of_what_it_trained_and_scored(finished):
    spec, _ = finished
    rows = read_table(spec.output_dir)
    assert set(rows) == distinct(spec)
    for relative, row in rows.items():
        directory = os.path.join(spec.output_dir, relative)
        with open(os.path.join(directory, "config.json")) as handle:
            config = json.load(handle)
        assert row["config_sha256"] == config_fingerprint(config, spec.output_dir)
        with open(os.path.join(directory, "metrics.json")) as handle:
            assert row["metrics"] == json.load(handle)
        assert row["started"] <= row["ended"]
        if relative.startswith("injection/"):
            assert row["encoder_sha256"] == encoder_fingerprint(os.path.join(directory, "encoder"))
        else:
            assert row["parameters"]["trainable"] > 0 and "encoder_sha256" not in row
    # Its encoder's path is read relative to the grid: the same config in another grid (or
    # another machine's checkout) has the same fingerprint.
    relative = next(r for r in rows if r.startswith("glue/tiny/tft/"))
    with open(os.path.join(spec.output_dir, relative, "config.json")) as handle:
        config = json.load(handle)
    moved = json.loads(json.dumps(config).replace(spec.output_dir, "/elsewhere/grid"))
    assert moved != config
    assert config_fingerprint(moved, "/elsewhere/grid") == rows[relative]["config_sha256"]
    assert config_fingerprint(moved, spec.output_dir) != rows[relative]["config_sha256"]


def test_a_grid_resumes_from_its_table_without_its_run_directories(finished, tmp_path):
    spec, expected = finished
    copy = tiny_grid(tmp_path / "grid", spec.base_models["tiny"])
    shutil.copytree(spec.output_dir, copy.output_dir)
    fresh_machine(copy)
    before = attempts(copy)
    with forked_experiment_runs():
        statuses = ExperimentRunner(copy).run()
    # Nothing the table marks finished starts again, the injection neither (every fine-tuning
    # of its encoder finished): no attempt, no directory.
    assert set(statuses.values()) == {"skipped"} and len(statuses) == len(distinct(copy))
    assert attempts(copy) == before
    assert not os.path.exists(os.path.join(copy.output_dir, "glue"))
    assert report(copy) == expected
    # A run whose row is forgotten (as `--force` forgets it) is unfinished, and trains again.
    (lost,) = [run for run in copy.glue_runs(tuned_choices(copy)) if run.recipe == "paper"][1:2]
    forget_runs(copy.output_dir, [grid_of(lost)[1]])
    assert not is_finished(lost) and finished_row(*grid_of(lost)) is None
    assert lost.variant == "tft"  # its encoder is rebuilt first, to the recorded one
    (injection,) = copy.injection_runs()
    recorded = read_fingerprint(injection)
    with forked_experiment_runs():
        statuses = ExperimentRunner(copy).run()
    started = {a["directory"] for a in attempts(copy)[len(before) :]}
    assert started == {grid_of(lost)[1], grid_of(injection)[1]}
    assert statuses[lost.directory] == statuses[injection.directory] == "done"
    assert encoder_fingerprint(injection.encoder) == recorded == read_fingerprint(injection)
    assert report(copy) == expected


def test_a_grid_reuses_the_runs_of_another_grids_table_and_its_encoder_record(finished, tmp_path):
    spec, expected = finished
    source = tiny_grid(tmp_path / "source", spec.base_models["tiny"])
    shutil.copytree(spec.output_dir, source.output_dir)
    fresh_machine(source)

    # The same grid: every run is taken from the table (the injection's record without its
    # encoder, the fine-tunings of that encoder by its fingerprint); nothing trains.
    same = tiny_grid(tmp_path / "same", spec.base_models["tiny"], reuse_from=[source.output_dir])
    with forked_experiment_runs():
        statuses = run_experiment(same)
    # (The injection, its record taken, is needed by no fine-tuning left: skipped.)
    assert set(statuses.values()) == {"done", "skipped"}
    assert {a["directory"]: a["outcome"] for a in attempts(same)} == {
        relative: "reused" for relative in distinct(same)
    }
    theirs, mine = read_table(source.output_dir), read_table(same.output_dir)
    for relative, row in mine.items():
        assert row["reused_from"] == source.output_dir
        assert {**row, "reused_from": None, "started": 0, "ended": 0} == {
            **theirs[relative],
            "reused_from": None,
            "started": 0,
            "ended": 0,
        }
    assert report(same) == expected
    assert not os.path.exists(os.path.join(same.output_dir, "injection/tiny/tft/encoder"))

    # A new fine-tuning seed needs the encoder: the injection is rebuilt here, to the encoder
    # the source recorded, and only seed 2's runs train.
    more = tiny_grid(
        tmp_path / "more", spec.base_models["tiny"], reuse_from=[source.output_dir], seeds=[1, 2]
    )
    with forked_experiment_runs():
        statuses = run_experiment(more)
    assert set(statuses.values()) == {"done"}
    outcomes = {}
    for attempt in attempts(more):
        outcomes.setdefault(attempt["directory"], []).append(attempt["outcome"])
    trained = {relative for relative, done in outcomes.items() if "done" in done}
    assert trained == {"injection/tiny/tft"} | {
        relative for relative in distinct(more) if relative.endswith("seed2")
    }
    (injection,) = more.injection_runs()
    (theirs,) = source.injection_runs()
    assert encoder_fingerprint(injection.encoder) == read_fingerprint(theirs)
    assert read_fingerprint(injection) == read_fingerprint(theirs)


def test_a_line_that_is_no_row_is_named_and_left_out(tmp_path, caplog):
    append_row(str(tmp_path), {"directory": "glue/a", "metrics": {"validation_accuracy": 0.5}})
    # A row cut short (a disk that filled up): the next row still gets a line of its own.
    with open(tmp_path / TABLE, "a") as handle:
        handle.write('{"directory": "glue/b", "metr')
    append_row(str(tmp_path), {"directory": "glue/c", "metrics": {}, "started": None})
    assert sorted(read_table(str(tmp_path))) == ["glue/a", "glue/c"]
    assert f"{tmp_path / TABLE}:2: not a row of finished runs" in caplog.text
    # Keys in the table's order, the unknown ones left out.
    assert list(read_table(str(tmp_path))["glue/c"]) == ["directory", "metrics"]
