"""Multitask GLUE: the configs of training_configs/multitask/ and AllenNLP 2.10.1's pitfalls."""

import copy
import json
from typing import List, Tuple

import pytest
import torch.distributed as dist
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Vocabulary
from allennlp.data.data_loaders import DataLoader
from allennlp.models import Model
from allennlp.nn.parallel import DdpAccelerator

from tests import CONFIGS_ROOT
from tft_allennlp.common.glue_tasks import GLUE_TASKS, resolve_task
from tft_allennlp.common.sentence_tasks import add_task_labels

CONFIGS = sorted((CONFIGS_ROOT / "multitask").glob("*.jsonnet"))
CONFIG = CONFIGS_ROOT / "multitask/sst2_mrpc_stsb.jsonnet"
TASKS = ["mrpc", "sst2", "stsb"]
# Rows of the fixtures: train and dev files.
TRAIN_SIZES = {"mrpc": 10, "sst2": 6, "stsb": 10}
DEV_SIZES = {"mrpc": 5, "sst2": 4, "stsb": 6}
RTE_LABELS = ["entailment", "not_entailment"]


def _params(config=CONFIG) -> Params:
    return Params.from_file(str(config))


def _loader(params: Params, split: str, loader_params: dict) -> DataLoader:
    """The config's `split` data loader with `loader_params` replacing some of its entries."""
    reader_key = "dataset_reader" if split == "train" else "validation_dataset_reader"
    loader_key = "data_loader" if split == "train" else "validation_data_loader"
    reader = DatasetReader.from_params(params[reader_key].duplicate())
    config = params[loader_key].as_dict(quiet=True)
    loader = DataLoader.from_params(
        Params(copy.deepcopy({**config, **loader_params})),
        reader=reader,
        data_path=params[f"{split}_data_path"].as_dict(quiet=True),
    )
    loader.index_with(_vocab(params))
    return loader


def _vocab(params: Params) -> Vocabulary:
    """The config's vocabulary with its tasks' labels, as `allennlp train` builds it (from no
    instances; each head adds its task's labels)."""
    vocab = Vocabulary.from_params(params["vocabulary"].duplicate(), instances=[])
    for reader in params["dataset_reader"]["readers"].as_dict(quiet=True).values():
        add_task_labels(vocab, resolve_task(reader["task"]))
    return vocab


def _ids(loader: DataLoader) -> List[List[Tuple[str, str]]]:
    """Each batch as its instances' (task, example id)."""
    return [
        [
            (task, meta["index"] or str(meta["line_number"]))
            for task, meta in zip(b["task"], b["metadata"])
        ]
        for b in loader
    ]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda path: path.stem)
def test_every_config_builds_with_a_head_per_task(config, monkeypatch):
    monkeypatch.setenv("TFT_CUDA_DEVICES", "0,1")
    params = _params(config)
    # A SMART config (tft_smart) wraps the multitask model.
    model_params = params["model"]
    if model_params["type"] == "tft_smart":
        model_params = model_params["model"]
    assert sorted(model_params["heads"].as_dict()) == TASKS
    assert params["trainer"]["validation_metric"] == "+glue_average"
    assert params["trainer"]["optimizer"]["lr"] == 3e-5
    for task in TASKS:
        assert params["dataset_reader"]["readers"][task]["task"] == task
        assert model_params["heads"][task]["task"] == task
    # Validation reads every instance once, in order: never the training loader's sampling.
    validation = params["validation_data_loader"].as_dict()
    assert validation["shuffle"] is False and "instances_per_epoch" not in validation
    assert validation["scheduler"]["type"] == "tft_sequential"
    distributed = params.get("distributed", None)
    if distributed is not None:
        assert distributed.as_dict()["ddp_accelerator"]["find_unused_parameters"] is True
        assert params["data_loader"]["scheduler"]["batch_size"] == 16
    vocab = _vocab(params)
    model = Model.from_params(params["model"].duplicate(), vocab=vocab)
    assert sorted(getattr(model, "inner_model", model)._heads) == TASKS
    assert len(_loader(params, "train", {})) == 3  # ceil(10/32) + ceil(6/32) + ceil(10/32)


def _library_config(arguments: str, tmp_path) -> Params:
    """`common/multitask.libsonnet` called with `arguments`."""
    library = CONFIGS_ROOT / "common/multitask.libsonnet"
    config = tmp_path / "config.jsonnet"
    config.write_text(f"(import '{library.resolve()}')({arguments})")
    return Params.from_file(str(config))


@pytest.mark.parametrize(
    "arguments, message",
    [
        (
            "tasks=['sst2'], scheduler='roundrobin'",
            "scheduler: one of tft_shuffled, tft_sequential, homogeneous_roundrobin",
        ),
    ],
)
def test_the_library_rejects_what_cannot_work(arguments, message, tmp_path):
    # The library's own assertion, as jsonnet reports it, not any error that mentions it.
    with pytest.raises(
        RuntimeError, match=r"^RUNTIME ERROR: " + message + r"\n.*multitask\.libsonnet"
    ):
        _library_config(arguments, tmp_path)


@pytest.mark.parametrize(
    "arguments, labels, scheduler",
    [
        # Binary tasks share their labels; STS-B has none.
        ("tasks=['sst2', 'mrpc', 'stsb']", ["0", "1"], "tft_shuffled"),
        ("tasks=['rte', 'qnli'], scheduler='tft_sequential'", RTE_LABELS, "tft_sequential"),
        ("tasks=['stsb'], scheduler='homogeneous_roundrobin'", [], "homogeneous_roundrobin"),
    ],
)
def test_the_library_accepts_what_works(arguments, labels, scheduler, tmp_path):
    params = _library_config(arguments, tmp_path)
    # The heads put their tasks' labels in the vocabulary (tasks with other labels: below).
    assert list(_vocab(params).get_token_to_index_vocabulary("labels")) == labels
    assert params.as_dict(quiet=True)["data_loader"]["scheduler"]["type"] == scheduler


def test_heads_with_different_label_sets_are_refused(tmp_path):
    library = CONFIGS_ROOT / "common/multitask.libsonnet"
    config = tmp_path / "config.jsonnet"
    config.write_text(f"(import '{library.resolve()}')(tasks=['sst2', 'rte'])")
    params = Params.from_file(str(config))
    vocab = Vocabulary.from_params(params["vocabulary"].duplicate(), instances=[])
    with pytest.raises(ConfigurationError, match="need the same labels"):
        Model.from_params(params["model"].duplicate(), vocab=vocab)


def test_length_is_exact_while_streaming_and_with_instances_per_epoch():
    """
    Pitfall (a): AllenNLP's `multitask` loader has no length when it streams
    (`max_instances_in_memory`), and counts `instances_per_epoch` for every task.
    """
    params = _params()
    streaming = {"scheduler": {"type": "tft_sequential", "batch_size": 4}, "shuffle": False}
    allennlp = _loader(params, "train", {**streaming, "type": "multitask"})
    with pytest.raises(TypeError):
        len(allennlp)
    loader = _loader(params, "train", streaming)
    # ceil(10/4) + ceil(6/4) + ceil(10/4)
    assert len(loader) == len(list(loader)) == 3 + 2 + 3

    # Uneven shares of 10 instances: floor(10 * w / 4) for weights mrpc 2, sst2 1, stsb 1.
    sampled = {
        **streaming,
        "scheduler": {"type": "tft_sequential", "batch_size": 2},
        "instances_per_epoch": 10,
        "sampler": {"type": "weighted", "weights": {"mrpc": 2, "sst2": 1, "stsb": 1}},
    }
    assert len(_loader(params, "train", {**sampled, "type": "multitask"})) == 3 * 5  # wrong
    loader = _loader(params, "train", sampled)
    epochs = [_ids(loader) for _ in range(4)]
    assert len(loader) == 3 + 1 + 1  # 5 mrpc, 2 sst2, 2 stsb instances, batches of 2
    assert [len(epoch) for epoch in epochs] == [5] * 4
    # Each epoch continues where the last stopped; SST-2 (6 rows) restarts in the 4th.
    sst2 = [[i for batch in epoch for task, i in batch if task == "sst2"] for epoch in epochs]
    assert sst2 == [["2", "3"], ["4", "5"], ["6", "7"], ["2", "3"]]


def test_validation_reads_every_instance_once_in_a_fixed_order():
    """Pitfall (b): validation must not reuse the training loader's shuffling or sampling."""
    loader = _loader(_params(), "validation", {})
    first = _ids(loader)
    assert _ids(loader) == first
    assert all(len({task for task, _ in batch}) == 1 for batch in first)
    read = [instance for batch in first for instance in batch]
    assert len(set(read)) == len(read) == sum(DEV_SIZES.values())
    # Task after task (alphabetical: jsonnet sorts the readers), each in file order.
    params = _params()
    expected = []
    for task in TASKS:
        reader = DatasetReader.from_params(params["validation_dataset_reader"]["readers"][task])
        rows = reader.read(params["validation_data_path"][task])
        expected += [
            (task, i["metadata"]["index"] or str(i["metadata"]["line_number"])) for i in rows
        ]
    assert read == expected


def test_shuffled_training_batches_hold_one_task_and_cover_the_epoch():
    loader = _loader(_params(), "train", {"scheduler": {"type": "tft_shuffled", "batch_size": 4}})
    batches = _ids(loader)
    assert len(batches) == len(loader) == 8
    assert all(len({task for task, _ in batch}) == 1 for batch in batches)
    read = [instance for batch in batches for instance in batch]
    assert len(set(read)) == len(read) == sum(TRAIN_SIZES.values())


def test_one_epoch_reports_each_task_and_their_average(tmp_path):
    overrides = {
        "trainer.num_epochs": 1,
        "data_loader.scheduler.batch_size": 4,
        "validation_data_loader.scheduler.batch_size": 4,
    }
    train_model_from_file(str(CONFIG), str(tmp_path), overrides=json.dumps(overrides))
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    scores = []
    for task in TASKS:
        names = GLUE_TASKS[task].metrics
        for name in names:
            assert f"validation_{task}_{name}" in metrics
            assert f"training_{task}_{name}" in metrics
        main = "combined_score" if len(names) > 1 else names[0]
        scores.append(metrics[f"validation_{task}_{main}"])
    assert metrics["validation_glue_average"] == pytest.approx(sum(scores) / len(scores))
    assert metrics["best_validation_glue_average"] == metrics["validation_glue_average"]


def test_ddp_needs_find_unused_parameters_for_the_idle_heads(tmp_path, monkeypatch):
    """
    Pitfall (c): a batch uses one head; DDP fails on the other heads' missing gradients
    unless the distributed config's `find_unused_parameters` is set. One CPU process (gloo).
    """
    monkeypatch.setenv("TFT_CUDA_DEVICES", "0,1")
    params = _params(CONFIGS_ROOT / "multitask/sst2_mrpc_stsb_distributed.jsonnet")
    accelerator = params["distributed"]["ddp_accelerator"].as_dict()
    vocab = _vocab(params)
    batch = next(iter(_loader(params, "validation", {})))
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/store", rank=0, world_size=1)
    try:
        for find_unused in (False, True):
            ddp = DdpAccelerator.from_params(
                Params({**accelerator, "find_unused_parameters": find_unused}),
                local_rank=0,
                world_size=1,
                cuda_device=-1,
            )
            _, wrapped = ddp.wrap_model(Model.from_params(params["model"].duplicate(), vocab=vocab))
            steps = lambda: [wrapped.model(**batch)["loss"].backward() for _ in range(2)]  # noqa: E731
            if find_unused:
                steps()
            else:
                with pytest.raises(RuntimeError, match="reduction"):
                    steps()
    finally:
        dist.destroy_process_group()


def test_the_model_takes_glue_heads_only():
    params = _params()
    model = params["model"].as_dict()
    model["heads"]["sst2"] = {
        "type": "classifier",
        "seq2vec_encoder": {"type": "cls_pooler", "embedding_dim": 32},
    }
    with pytest.raises(ConfigurationError, match=r"tft_glue_head heads: \['sst2'\]"):
        Model.from_params(Params(model), vocab=_vocab(params))
