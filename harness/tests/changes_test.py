import json
import logging
import os

import pytest
from allennlp.common.checks import ConfigurationError

from tft_experiments import ExperimentSpec
from tft_experiments.changes import (
    HISTORY_FILE,
    SPEC_FILE,
    accept_change,
    check_change,
    spec_change,
)
from tft_experiments.locks import RunLock
from tft_experiments.outcomes import is_finished


def grid(output_dir, **values):
    """A grid of RTE runs at 8 examples, two epochs; nothing of it trains in these tests."""
    settings = {
        "output_dir": str(output_dir),
        "base_models": {"b": "m"},
        "tasks": ["rte"],
        "glue_dir": "g",
        "variants": ["none"],
        "train_sizes": [8],
        "seeds": [1],
        "glue_overrides": {"trainer.num_epochs": 2},
    }
    return ExperimentSpec(**{**settings, **values})


def ran(spec):
    """Records `spec` as the one its output directory ran with, as the command does."""
    os.makedirs(spec.output_dir, exist_ok=True)
    with open(os.path.join(spec.output_dir, SPEC_FILE), "w") as handle:
        handle.write(spec.dumps())


def finish(run):
    os.makedirs(run.directory)
    with open(os.path.join(run.directory, "metrics.json"), "w") as handle:
        json.dump({"validation_accuracy": 0.5}, handle)


def relative(spec, runs):
    return [os.path.relpath(run.directory, spec.output_dir) for run in runs]


SEED1 = "glue/b/none/paper/rte/n8/seed1"
SEED2 = "glue/b/none/paper/rte/n8/seed2"


def test_a_new_grid_or_the_same_spec_is_no_change(tmp_path):
    first = grid(tmp_path)
    assert spec_change(first) is None  # no spec.json: a new grid
    ran(first)
    finish(next(first.glue_runs()))
    assert spec_change(first) is None
    # The same spec from its file, with the overrides in another order.
    assert spec_change(grid(tmp_path, glue_overrides={"trainer.num_epochs": 2})) is None


def test_a_spec_that_trains_no_finished_run_otherwise_extends_or_trims_the_grid(tmp_path, caplog):
    first = grid(tmp_path)
    ran(first)
    (run,) = first.glue_runs()
    finish(run)
    more = spec_change(grid(tmp_path, seeds=[1, 2], tasks=["rte", "mrpc"]))
    assert (more.keys, more.changed, more.key) == (["tasks", "seeds"], [], None)
    with caplog.at_level(logging.INFO, "tft_experiments"):
        accept_change(more)
    assert caplog.messages == [
        f"{tmp_path}/spec.json: the spec changed ('tasks', 'seeds'), and no finished run trains "
        "otherwise: the grid goes on with it."
    ]
    assert os.path.exists(os.path.join(run.directory, "metrics.json"))
    # Seed 2 alone: the sweep's seeds default to the first seed, so they differ too.
    other = spec_change(grid(tmp_path, seeds=[2]))
    assert (other.keys, other.changed) == (["seeds", "sweep_seeds"], [])
    # What is reported, not what trains.
    best = spec_change(grid(tmp_path, metric_epoch="best", retries=3))
    assert (best.keys, best.changed) == (["metric_epoch", "retries"], [])


def test_a_spec_that_trains_a_finished_run_otherwise_names_the_key_that_does(tmp_path):
    first = grid(tmp_path, seeds=[1, 2])
    ran(first)
    done, started = first.glue_runs()
    finish(done)
    os.makedirs(started.directory)  # unfinished: it trains with whichever spec comes
    values = dict(seeds=[1, 2], tasks=["rte", "mrpc"], glue_overrides={"trainer.num_epochs": 1})
    fewer_epochs = grid(tmp_path, **values)
    change = spec_change(fewer_epochs)
    assert change.keys == ["tasks", "glue_overrides"]
    assert relative(fewer_epochs, change.changed) == [SEED1]
    # `tasks` differs first, but adds runs only.
    assert change.key == "glue_overrides"
    for key, value in [
        ("base_models", {"b": "another checkpoint"}),
        ("glue_dir", "another/glue"),
        ("recipes", {"paper": {"trainer.optimizer.lr": 1e-4}}),
    ]:
        change = spec_change(grid(tmp_path, seeds=[1, 2], **{key: value}))
        assert (change.keys, change.key) == ([key], key)
        assert relative(first, change.changed) == [SEED1]


def test_an_injection_trained_otherwise_changes_every_fine_tuning_of_its_encoder(tmp_path):
    values = dict(variants=["none", "tft"], paraphrase_corpus="a.jsonl")
    first = grid(tmp_path, **values)
    ran(first)
    (injection,) = first.injection_runs()
    for run in [injection, *first.glue_runs()]:
        finish(run)
    other_corpus = spec_change(grid(tmp_path, **{**values, "paraphrase_corpus": "b.jsonl"}))
    assert other_corpus.key == "paraphrase_corpus"
    # The fine-tuning of the base model itself stays.
    fine_tuning = "glue/b/tft/paper/rte/n8/seed1"
    assert relative(first, other_corpus.changed) == ["injection/b/tft", fine_tuning]
    other_seed = spec_change(grid(tmp_path, **values, injection_seed=2))
    assert other_seed.keys == ["injection_seed", "injection_seeds"]
    assert other_seed.key == "injection_seed"
    assert relative(first, other_seed.changed) == ["injection/b/tft", fine_tuning]

    # --force: the changed runs are deleted, with what lies beside them, the others kept; the
    # spec they were trained with goes to the history.
    beside = [f"{injection.directory}.failed"]
    beside += [os.path.join(tmp_path, f"{fine_tuning}.not_taken")]
    for path in beside:
        open(path, "w").close()
    lock = RunLock(injection.directory)
    assert lock.acquire()
    with pytest.raises(ConfigurationError, match="injection/b/tft: a process is training it"):
        accept_change(other_corpus)
    assert os.path.exists(os.path.join(injection.directory, "metrics.json"))
    lock.release()
    accept_change(other_corpus)
    assert not os.path.exists(injection.directory) and not os.path.exists(fine_tuning)
    assert not [path for path in beside if os.path.exists(path)]
    # Their rows are forgotten: unfinished, even where a directory came back.
    finish(injection)
    assert not is_finished(injection)
    assert os.listdir(os.path.join(tmp_path, "glue/b/none/paper/rte/n8/seed1")) == ["metrics.json"]
    history = [json.loads(line) for line in open(tmp_path / HISTORY_FILE)]
    assert history == [json.loads(first.dumps())]


def test_a_run_a_later_spec_left_out_is_compared_with_the_last_spec_that_had_it(tmp_path):
    first = grid(tmp_path, seeds=[1, 2])
    ran(first)
    for run in first.glue_runs():
        finish(run)
    # Seed 2 left out and one epoch, with --force: seed 1 trains again, seed 2 stays as it was.
    fewer = grid(tmp_path, seeds=[1], glue_overrides={"trainer.num_epochs": 1})
    change = spec_change(fewer)
    assert relative(fewer, change.changed) == [SEED1]
    accept_change(change)
    ran(fewer)
    # Seed 2 back: spec.json never had it, the spec before did, with two epochs.
    back = grid(tmp_path, seeds=[1, 2], glue_overrides={"trainer.num_epochs": 1})
    change = spec_change(back)
    assert change.keys == ["seeds"]
    assert (relative(back, change.changed), change.key) == ([SEED2], "glue_overrides")


def test_a_refused_change_says_in_one_line_which_key_and_how_to_go_on(tmp_path):
    first = grid(tmp_path, seeds=[1, 2])
    ran(first)
    for run in first.glue_runs():
        finish(run)
    change = spec_change(grid(tmp_path, seeds=[1, 2], glue_overrides={"trainer.num_epochs": 1}))
    with pytest.raises(ConfigurationError) as refused:
        check_change(change, "new.json", force=False, report_only=False)
    assert str(refused.value) == (
        f"new.json: 'glue_overrides' differs from the spec that output_dir {tmp_path} ran with: "
        f"2 finished runs would train otherwise ({SEED1}, ...); give another output_dir (its "
        f"reuse_from may name {tmp_path} to take the runs that stay the same), or --force to "
        "train them again there"
    )
    check_change(change, "new.json", force=True, report_only=False)
    # --report-only trains nothing, so it would report the old scores under the new spec.
    for force in (False, True):
        with pytest.raises(ConfigurationError, match="without --report-only and with --force"):
            check_change(change, "new.json", force=force, report_only=True)
    check_change(spec_change(grid(tmp_path, seeds=[1, 2, 3])), "new.json", False, True)


def test_a_spec_json_that_is_no_spec_is_refused(tmp_path):
    (tmp_path / SPEC_FILE).write_text('{"seedz": [1]}')
    with pytest.raises(ConfigurationError, match=f"{tmp_path}/spec.json: unknown key 'seedz'.*"):
        spec_change(grid(tmp_path))


def test_the_custom_tasks_in_use_stay_this_specs(tmp_path):
    def pairs(labels):
        description = {"sentence1": "a", "sentence2": "b", "label": "l", "labels": labels}
        return {"task": description, "train_data_path": "t", "validation_data_path": "v"}

    ran(grid(tmp_path, tasks=["pairs"], custom_tasks={"pairs": pairs(["x", "y"])}))
    new = grid(tmp_path, tasks=["pairs"], custom_tasks={"pairs": pairs(["yes", "no"])})
    # Reading the spec it ran with reads its own task "pairs"; each spec keeps its own.
    assert spec_change(new).keys == ["custom_tasks"]
    assert new.task("pairs").labels == ("yes", "no")
    assert new.task_table()["pairs"].labels == ("yes", "no")
