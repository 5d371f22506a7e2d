"""
The fine-tuning strategies (`strategies/`): the runs each adds to the grid, the configs it
generates, and a grid of several strategies run and reported.
"""

import csv
import json
import os

import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from transformers import AutoModel

from tests import FIXTURES_ROOT, PROJECT_ROOT
from tests.allennlp_cli import forked_experiment_runs
from tft_experiments import ExperimentSpec, collect_results
from tft_experiments.commands.experiment import run_experiment, write_outputs
from tft_experiments.strategies.multitask import multitask_overrides
from tiny_grids import tiny_strategy_spec


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
