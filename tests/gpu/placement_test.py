"""
Every model family of the plugin trains an epoch of its fixture data on the device (AllenNLP's
`gradient_descent` trainer with `cuda_device`), and every parameter and buffer ends up there.
"""

import json

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.common import cached_transformers

from tests import CONFIGS_ROOT

pytestmark = pytest.mark.gpu

INJECTION = {"dataset_reader.part": "all", "validation_dataset_reader.part": "all"}
SMALL_DEV = {
    "dataset_reader.validation_fraction": 0.25,
    "validation_dataset_reader.validation_fraction": 0.25,
}
FAMILIES = {
    "glue_classifier": ("glue/mrpc.jsonnet", {}),
    "glue_regression": ("glue/stsb.jsonnet", {}),
    "paraphrase_injector": ("injection/tft.jsonnet", INJECTION),
    "siamese_softmax": ("siamese/mrpc_softmax.jsonnet", {}),
    "siamese_cosine": ("siamese/stsb_cosine.jsonnet", {}),
    "multitask": ("multitask/sst2_mrpc_stsb.jsonnet", {}),
    "smart": ("smart/mrpc.jsonnet", {}),
    "adapters": ("adapters/injection_tft.jsonnet", SMALL_DEV),
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_every_model_family_trains_on_the_device(family, device, tmp_path):
    config, overrides = FAMILIES[family]
    cuda_device = device.index if device.type == "cuda" else -1
    overrides = {**overrides, "trainer.num_epochs": 1, "trainer.cuda_device": cuda_device}
    cached_transformers._clear_caches()
    model = train_model_from_file(
        str(CONFIGS_ROOT / config), str(tmp_path), overrides=json.dumps(overrides)
    )
    places = {tensor.device for tensor in [*model.parameters(), *model.buffers()]}
    assert places == {device}
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["training_loss"] == metrics["training_loss"]  # not NaN
