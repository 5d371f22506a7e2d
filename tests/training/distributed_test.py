"""
Distributed training on the CPU (two gloo workers, `"cuda_devices": [-1, -1]`):

- against a single process taking the same steps, for every task family: each step is one batch
  of the whole training set, split between the workers by the readers' sharding, dropout is off
  and the optimizer is plain SGD, so both runs take the same gradient steps, up to summation
  order (Adam would turn float noise in a near-zero gradient into a full-size step);
- on files whose instances do not split evenly between the workers (two loader workers each),
  counting the instances every worker really trained and validated on in each epoch.
"""

import json

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params, cached_transformers
from allennlp.data import DatasetReader

from tests import CONFIGS_ROOT
from tests.allennlp_cli import allennlp_train, write_config
from tests.synthetic import write_corpus, write_mrpc

NO_DROPOUT = {"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}
COMMON = {
    "model.dropout": 0.0,
    "model.text_field_embedder.token_embedders.tokens.transformer_kwargs": NO_DROPOUT,
    "data_loader.shuffle": False,
    "trainer.num_epochs": 3,
    # Large enough for the loss to move visibly in three steps.
    "trainer.optimizer": {"type": "sgd", "lr": 0.5},
}
INJECTION = {"dataset_reader.part": "all", "validation_dataset_reader.part": "all"}
# config, overrides, batch size of the single process: the whole training set (the GLUE
# fixtures' rows; the aligned fixture's 12 lines give 24 instances).
RUNS = {
    "mrpc": (CONFIGS_ROOT / "glue/mrpc.jsonnet", {}, 10),
    "stsb": (CONFIGS_ROOT / "glue/stsb.jsonnet", {}, 10),
    "cola": (CONFIGS_ROOT / "glue/cola.jsonnet", {}, 6),
    "rte": (CONFIGS_ROOT / "glue/rte.jsonnet", {}, 4),
    "tft": (CONFIGS_ROOT / "injection/tft.jsonnet", INJECTION, 24),
    "tft_simple": (CONFIGS_ROOT / "injection/tft_simple.jsonnet", INJECTION, 24),
}


# After three steps the tiny model's STS-B dev predictions spread by a standard deviation of about
# 1e-3 around 1.15, where float32 resolves 1.2e-7: summation-order noise then moves Pearson's r by
# about 1e-4 although the weights agree to 1e-8. A per-worker (wrong) Pearson would be off by 0.1.
TOLERANCE = {("stsb", "validation_pearson"): 1e-3, ("stsb", "validation_combined_score"): 1e-3}


def epoch_metrics(directory, epochs=3):
    return [
        json.loads((directory / f"metrics_epoch_{epoch}.json").read_text())
        for epoch in range(epochs)
    ]


def single_then_distributed(tmp_path, run, edit=None):
    """
    Trains `RUNS[run]` in one process (`tmp_path/single`), each step one batch of the whole
    training set, and writes the config of two gloo workers taking the same steps (`edit`
    changes its params); the config's path.
    """
    config, overrides, batch_size = RUNS[run]
    single_overrides = {**COMMON, **overrides, "data_loader.batch_size": batch_size}
    single = write_config(tmp_path / "single.json", config, single_overrides)
    distributed = write_config(
        tmp_path / "distributed.json",
        config,
        {
            **single_overrides,
            "data_loader.batch_size": batch_size // 2,
            "distributed": {"cuda_devices": [-1, -1]},
        },
        edit,
    )
    # AllenNLP caches each transformer by name and ignores the dropout-free kwargs if an earlier
    # test loaded the tiny BERT in this process: start from an empty cache.
    cached_transformers._clear_caches()
    train_model_from_file(str(single), str(tmp_path / "single"))
    return distributed


def assert_same_best_weights(tmp_path):
    single_weights = torch.load(tmp_path / "single/best.th", weights_only=True)
    distributed_weights = torch.load(tmp_path / "distributed/best.th", weights_only=True)
    for name, tensor in single_weights.items():
        assert torch.allclose(distributed_weights[name], tensor, atol=1e-6), name


@pytest.mark.parametrize("run", list(RUNS))
def test_two_gloo_workers_train_like_one_process(run, tmp_path):
    distributed = single_then_distributed(tmp_path, run)
    result = allennlp_train(distributed, tmp_path / "distributed")
    assert result.returncode == 0, result.stderr[-3000:]

    expected = epoch_metrics(tmp_path / "single")
    actual = epoch_metrics(tmp_path / "distributed")
    losses = [metrics["training_loss"] for metrics in expected]
    # The runs are worth comparing only if training changes the loss.
    assert abs(losses[2] - losses[0]) > 0.005 * losses[0]
    for single_metrics, distributed_metrics in zip(expected, actual):
        assert distributed_metrics["training_loss"] == pytest.approx(
            single_metrics["training_loss"], rel=1e-5
        )
        validation = [
            key
            for key in single_metrics
            if key.startswith("validation_") and key != "validation_loss"
        ]
        assert validation
        for key in validation:
            tolerance = TOLERANCE.get((run, key), 1e-5)
            assert distributed_metrics[key] == pytest.approx(single_metrics[key], abs=tolerance), (
                key
            )
    assert_same_best_weights(tmp_path)


def instance_ids(reader_params, path):
    """What one process reads of `path`: (line, random partner or 0) per instance."""
    reader = DatasetReader.from_params(reader_params)
    return [
        [i["metadata"]["line_number"], i["metadata"].metadata.get("partner_line_number", 0)]
        for i in reader.read(str(path))
    ]


UNEVEN = {
    # family, lines: 101 give the two workers 51 and 50 lines, so with batches of 25 one worker
    # has a batch more; 1 line gives one worker no data at all.
    "glue-101": ("glue", 101),
    "glue-1": ("glue", 1),
    "injection-101": ("injection", 101),
    "injection-1": ("injection", 1),
}


@pytest.mark.parametrize("case", list(UNEVEN))
def test_every_instance_is_trained_and_validated_once_per_epoch(case, tmp_path):
    family, lines = UNEVEN[case]
    if family == "glue":
        config, data, overrides = CONFIGS_ROOT / "glue/mrpc.jsonnet", tmp_path / "data.tsv", {}
        write_mrpc(data, lines)
    else:
        config, data, overrides = (
            CONFIGS_ROOT / "injection/tft.jsonnet",
            tmp_path / "data.jsonl",
            INJECTION,
        )
        write_corpus(data, lines)
    expected = instance_ids(
        Params.from_file(str(config), json.dumps(overrides))["dataset_reader"], data
    )
    # The same file for training and validation.
    paths = {"train_data_path": str(data), "validation_data_path": str(data)}
    loader = {"batch_size": 25, "num_workers": 2}
    settings = {
        **overrides,
        **paths,
        **{f"data_loader.{key}": value for key, value in loader.items()},
        **{f"validation_data_loader.{key}": value for key, value in loader.items()},
        "trainer.num_epochs": 2,
        "distributed": {"cuda_devices": [-1, -1]},
    }
    path = write_config(
        tmp_path / "config.json",
        config,
        settings,
        lambda params: params["trainer"]["callbacks"].append({"type": "test_record_batches"}),
    )
    result = allennlp_train(path, tmp_path / "run")
    assert result.returncode == 0, result.stderr[-3000:]
    records = {
        rank: [json.loads(line) for line in open(tmp_path / f"run/batches_rank{rank}.jsonl")]
        for rank in (0, 1)
    }
    padding = 0
    for epoch in (0, 1):
        for training in (True, False):
            batches = {
                rank: [r for r in records[rank] if (r["epoch"], r["training"]) == (epoch, training)]
                for rank in records
            }
            # Both workers take the same number of steps, the length the loader announced.
            assert len(batches[0]) == len(batches[1]) == batches[0][0]["loader_length"]
            seen = sorted(
                tuple(i) for rank in batches for batch in batches[rank] for i in batch["ids"]
            )
            assert seen == sorted(tuple(i) for i in expected), (epoch, training)
            padding += sum(not batch["ids"] for rank in batches for batch in batches[rank])
    # The worker with less data took empty batches (training and validation, both epochs).
    assert padding >= 4


def test_a_worker_signalled_alone_stops_both_at_its_batch_and_recover_goes_on(tmp_path):
    """
    SIGTERM to worker 1 only, after the first (and only) batch of epoch 1: both workers stop
    there, before validating, with one checkpoint, the launcher exits 143, and `--recover` ends
    where a single process taking the same steps does (`tft_allennlp.training.stop_signals`).
    """
    distributed = single_then_distributed(
        tmp_path,
        "mrpc",
        lambda params: params["trainer"]["callbacks"].append(
            {"type": "test_sigkill", "epoch": 1, "batch": 1, "signal": "SIGTERM", "rank": 1}
        ),
    )
    stopped = allennlp_train(distributed, tmp_path / "distributed")
    assert stopped.returncode == 143, stopped.stderr[-3000:]
    assert "SIGTERM: stopped at epoch 1, batch 1," in stopped.stdout
    names = set(p.name for p in (tmp_path / "distributed").iterdir())
    assert {"model_state_e1_b1.th", "training_state_e1_b1.th"} <= names
    assert not names & {"metrics.json", "model.tar.gz", "metrics_epoch_1.json"}
    recovered = allennlp_train(distributed, tmp_path / "distributed", "--recover")
    assert recovered.returncode == 0, recovered.stderr[-3000:]
    expected = epoch_metrics(tmp_path / "single")
    actual = epoch_metrics(tmp_path / "distributed")
    # Epoch 1 had no batch left to train after the recovery, so it reports no training loss.
    for epoch in (0, 2):
        assert actual[epoch]["training_loss"] == pytest.approx(
            expected[epoch]["training_loss"], rel=1e-5
        )
    assert abs(expected[2]["training_loss"] - expected[0]["training_loss"]) > 0.05
    for single_metrics, distributed_metrics in zip(expected, actual):
        for key in ("validation_accuracy", "validation_f1"):
            assert distributed_metrics[key] == pytest.approx(single_metrics[key], abs=1e-5), key
    assert_same_best_weights(tmp_path)


def test_a_worker_signalled_in_validation_stops_both_after_the_epoch(tmp_path):
    """
    SIGTERM to worker 1 only, during epoch 0's validation: both workers finish it and stop at
    the end of the epoch with its checkpoint (they agree at the epoch's end as at each batch),
    and `--recover` ends where a single process taking the same steps does. Worker 1 would abort
    in the interpreter's teardown, as gloo's threads now and then made it: a stopped worker ends
    before it, so the launcher still exits 143.
    """
    distributed = single_then_distributed(
        tmp_path,
        "mrpc",
        lambda params: params["trainer"]["callbacks"].append(
            {
                "type": "test_sigkill",
                "at": "validation",
                "epoch": 0,
                "batch": 1,
                "signal": "SIGTERM",
                "rank": 1,
                "teardown_aborts": True,
            }
        ),
    )
    stopped = allennlp_train(distributed, tmp_path / "distributed")
    assert stopped.returncode == 143, stopped.stderr[-3000:]
    assert "SIGTERM: stopped after epoch 0, with a checkpoint there;" in stopped.stdout
    names = set(p.name for p in (tmp_path / "distributed").iterdir())
    assert {"model_state_e1_b0.th", "training_state_e1_b0.th", "metrics_epoch_0.json"} <= names
    assert not names & {"metrics.json", "model.tar.gz", "metrics_epoch_1.json"}
    recovered = allennlp_train(distributed, tmp_path / "distributed", "--recover")
    assert recovered.returncode == 0, recovered.stderr[-3000:]
    expected = epoch_metrics(tmp_path / "single")
    actual = epoch_metrics(tmp_path / "distributed")
    for single_metrics, distributed_metrics in zip(expected, actual):
        for key in ("training_loss", "validation_accuracy", "validation_f1"):
            assert distributed_metrics[key] == pytest.approx(single_metrics[key], abs=1e-5), key
    assert_same_best_weights(tmp_path)
