"""
`allennlp tft-experiment` (`commands/experiment.py`) end to end: a 2 variants x 2 seeds grid run
by two shards at once, then `--report-only` (the module fixture `experiment`, built once: every
test that uses it is here), its resumption and reuse by other grids; and the command line: a
changed spec refused or forced, a spec found wrong, a stopped grid's report.
"""

import csv
import itertools
import json
import logging
import os
import shutil
import statistics

import pytest
import torch
from allennlp.common.checks import ConfigurationError
from transformers import AutoModel

from tests import FIXTURES_ROOT
from tests.allennlp_cli import forked_allennlp, forked_experiment_runs
from tft_experiments import ExperimentSpec, collect_results, tuned_choices
from tft_experiments.commands.experiment import run_experiment
from tft_experiments.outcomes import encoder_fingerprint, read_fingerprint, run_row
from tft_experiments.reuse import copy_run, injection_origin
from tft_experiments.runner import ExperimentRunner
from tft_experiments.runs import grid_of
from tft_experiments.table import TABLE, append_row, forget_runs
from tiny_grids import cli_spec, glue_metrics


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
