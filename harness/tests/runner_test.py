"""
The scheduling loop (`runner.py`): shards, two processes on one grid, runs left to other
processes or being trained in another grid; and runs killed, signalled or orphaned, resumed from
their checkpoints (`training.py`).
"""

import argparse
import dataclasses
import json
import logging
import os
import re
import subprocess
import sys
import time

import pytest
from allennlp.common import Params

from tests import CONFIGS_ROOT, FIXTURES_ROOT, PROJECT_ROOT
from tests.allennlp_cli import forked_experiment_runs
from tft_experiments import ExperimentSpec
from tft_experiments.commands.experiment import Experiment, run_experiment
from tft_experiments.locks import RunLock
from tft_experiments.runner import ExperimentRunner, parse_shard
from tft_experiments.training import RunStopped, resumable
from tiny_grids import glue_metrics


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
