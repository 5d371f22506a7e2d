import json

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params

from tests import CONFIGS_ROOT
from tft_allennlp.common.glue_tasks import GLUE_TASKS

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
