import json

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params
from allennlp.data import Vocabulary
from allennlp.models import Model

from tests import CONFIGS_ROOT
from tft_allennlp.common.glue_tasks import GLUE_TASKS
from tft_allennlp.models.smart import SmartRegularizedModel

GLUE_CONFIGS = sorted((CONFIGS_ROOT / "glue").glob("*.jsonnet"))


def test_one_config_per_glue_task():
    assert [path.stem for path in GLUE_CONFIGS] == sorted(GLUE_TASKS)


@pytest.mark.parametrize("config", GLUE_CONFIGS, ids=lambda path: path.stem)
def test_glue_config_trains_on_the_fixtures(config, tmp_path):
    params = Params.from_file(str(config))
    task = params["model"]["task"]
    assert params["dataset_reader"]["task"] == task
    # The paper's recipe, shared by every task.
    assert params["data_loader"]["batch_size"] == 32
    assert params["trainer"]["optimizer"]["lr"] == 3e-5
    assert params["trainer"]["num_epochs"] == 4
    assert params["model"]["dropout"] == 0.1
    assert params["dataset_reader"]["max_length"] == 128
    model = train_model_from_file(
        str(config), str(tmp_path), overrides=json.dumps({"trainer.num_epochs": 1})
    )
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    for name in GLUE_TASKS[task].metrics:
        assert f"validation_{name}" in metrics
    assert model.get_metrics().keys() >= set(GLUE_TASKS[task].metrics)


INJECTION_CONFIGS = sorted((CONFIGS_ROOT / "injection").glob("*.jsonnet"))


def test_injection_variants():
    assert {path.stem for path in INJECTION_CONFIGS} == {
        "tft",
        "tft_simple",
        "sentence_only",
        "three_way_pp",
        "binary_pp",
    }


@pytest.mark.parametrize("config", INJECTION_CONFIGS, ids=lambda path: path.stem)
def test_injection_config_carries_the_paper_settings(config):
    params = Params.from_file(str(config))
    assert params["trainer"]["optimizer"].as_dict() == {"type": "adam", "lr": 5e-5}
    assert params["data_loader"]["batch_size"] == 100
    assert params["model"]["dropout"] == 0.2
    stop = params["trainer"]["callbacks"][1]
    assert stop["type"] == "tft_stop_after_decreases" and stop["decreases"] == 2
    assert params["trainer"]["validation_metric"] == "+" + stop["metric"]
    assert params["dataset_reader"]["part"] == "train"
    assert params["validation_dataset_reader"]["part"] == "validation"


DISTRIBUTED_CONFIGS = sorted((CONFIGS_ROOT / "distributed").glob("*.jsonnet"))


@pytest.mark.parametrize("config", DISTRIBUTED_CONFIGS, ids=lambda path: path.stem)
@pytest.mark.parametrize("nodes", [1, 2])
def test_distributed_configs_split_the_papers_batch_over_the_gpus(config, nodes, monkeypatch):
    family = "injection" if config.stem == "tft" else "glue"
    base = Params.from_file(str(CONFIGS_ROOT / family / config.name)).as_dict(quiet=True)
    monkeypatch.setenv("TFT_CUDA_DEVICES", "0,1,2,3")
    expected = {"cuda_devices": [0, 1, 2, 3]}
    if nodes > 1:
        monkeypatch.setenv("TFT_NUM_NODES", str(nodes))
        monkeypatch.setenv("TFT_PRIMARY_ADDRESS", "node-a.cluster")
        monkeypatch.setenv("TFT_PRIMARY_PORT", "29611")
        expected.update(num_nodes=2, primary_address="node-a.cluster", primary_port=29611)
    params = Params.from_file(str(config)).as_dict(quiet=True)
    assert params.pop("distributed") == expected
    assert params["trainer"].pop("type") == "tft_mixed_precision"
    assert params["trainer"].pop("precision") == "auto"
    batch_size = base["data_loader"].pop("batch_size")
    assert params["data_loader"].pop("batch_size") == batch_size // (4 * nodes)
    # Nothing else changes: the recipe is the single-GPU config's.
    assert params == base


ADAPTER_CONFIGS = sorted((CONFIGS_ROOT / "adapters").glob("*.jsonnet"))


@pytest.mark.parametrize("config", ADAPTER_CONFIGS, ids=lambda path: path.stem)
def test_adapter_configs_train_only_their_adapters(config, tmp_path):
    params = Params.from_file(str(config)).as_dict(quiet=True)
    assert params["trainer"]["optimizer"]["lr"] == 3e-4
    overrides = {"trainer.num_epochs": 1}
    if "backbone" in params["model"]:
        adapters = params["model"]["backbone"]["adapters"]
        assert params["model"]["backbone"]["type"] == "tft_pretrained_transformer"
    else:
        adapters = params["model"]["text_field_embedder"]["token_embedders"]["tokens"]["adapters"]
    assert adapters["type"] == "tft_bottleneck" and adapters["bottleneck"] == 64
    if "injection" in config.stem:
        # The fixture corpus is small: a quarter of it for validation.
        overrides["dataset_reader.validation_fraction"] = 0.25
        overrides["validation_dataset_reader.validation_fraction"] = 0.25
    train_model_from_file(str(config), str(tmp_path), overrides=json.dumps(overrides))
    counts = json.loads((tmp_path / "parameter_counts.json").read_text())
    assert 0 < counts["trainable"] < counts["frozen"]
    assert "best_validation_loss" in json.loads((tmp_path / "metrics.json").read_text())


LORA_CONFIGS = sorted((CONFIGS_ROOT / "lora").glob("*.jsonnet"))


@pytest.mark.parametrize("config", LORA_CONFIGS, ids=lambda path: path.stem)
def test_lora_configs_are_their_glue_config_with_lora_and_train_only_it(config, tmp_path):
    base = Params.from_file(str(CONFIGS_ROOT / "glue" / config.name)).as_dict(quiet=True)
    params = Params.from_file(str(config)).as_dict(quiet=True)
    tokens = params["model"]["text_field_embedder"]["token_embedders"]["tokens"]
    assert tokens.pop("adapters") == {"type": "lora", "r": 8, "alpha": 8}
    assert params["trainer"]["optimizer"].pop("lr") == 5e-4
    base["trainer"]["optimizer"].pop("lr")
    # The no-decay group without the frozen layer norms.
    groups = params["trainer"]["optimizer"].pop("parameter_groups")
    assert groups == [[["bias"], {"weight_decay": 0}]]
    assert base["trainer"]["optimizer"].pop("parameter_groups")[0][0] == [
        "bias",
        "LayerNorm\\.weight",
    ]
    assert params == base
    train_model_from_file(str(config), str(tmp_path), overrides='{"trainer.num_epochs": 1}')
    counts = json.loads((tmp_path / "parameter_counts.json").read_text())
    # The tiny BERT: r (32 + 32) for each of 2 layers' query and value, and the classifier.
    classifier = 2 * 32 + 2 if config.stem == "mrpc" else 32 + 1
    assert counts["trainable"] == 2 * 2 * 8 * 64 + classifier


SMART_CONFIGS = sorted((CONFIGS_ROOT / "smart").glob("*.jsonnet"))


def test_smart_configs():
    assert [path.stem for path in SMART_CONFIGS] == ["mrpc", "rte", "sst2", "stsb"]


@pytest.mark.parametrize("config", SMART_CONFIGS, ids=lambda path: path.stem)
def test_smart_config_is_its_glue_config_with_the_model_wrapped(config):
    base = Params.from_file(str(CONFIGS_ROOT / "glue" / config.name)).as_dict(quiet=True)
    # The glue config's keys keep working, the model's one level down.
    overrides = json.dumps({"model.model.dropout": 0.2})
    params = Params.from_file(str(config), overrides)
    vocab = Vocabulary.from_params(params["vocabulary"].duplicate(), instances=[])
    model = Model.from_params(params["model"].duplicate(), vocab=vocab)
    assert isinstance(model, SmartRegularizedModel)
    assert model.inner_model._task_output._dropout.p == 0.2
    params = params.as_dict(quiet=True)
    smart = params.pop("model")
    assert smart.pop("model") == {**base.pop("model"), "dropout": 0.2}
    assert smart == {"type": "tft_smart", "adversarial_weight": 1, "proximal_weight": 1}
    assert params == base


def test_the_multitask_smart_config_regularises_sst2_only():
    base = Params.from_file(str(CONFIGS_ROOT / "multitask/sst2_mrpc_stsb.jsonnet"))
    params = Params.from_file(str(CONFIGS_ROOT / "multitask/sst2_mrpc_stsb_smart.jsonnet"))
    base, params = base.as_dict(quiet=True), params.as_dict(quiet=True)
    smart = params.pop("model")
    assert smart.pop("model") == base.pop("model")
    assert smart == {
        "type": "tft_smart",
        "adversarial_weight": 1,
        "proximal_weight": 1,
        "outputs": {"sst2_logits": "classification"},
    }
    assert params == base
