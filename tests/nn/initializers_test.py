import torch
from allennlp.common import Params
from allennlp.data import Vocabulary
from allennlp.models import Model

from tests import CONFIGS_ROOT
from tft_allennlp.nn.initializers import classifier_initializer


def test_named_linear_layers_get_berts_classifier_initialisation():
    torch.manual_seed(0)
    module = torch.nn.Module()
    module._output_layer = torch.nn.Linear(400, 300)
    module._other = torch.nn.Linear(4, 3)
    other_weight = module._other.weight.clone()
    classifier_initializer("_output_layer")(module)
    assert torch.equal(module._output_layer.bias, torch.zeros(300))
    assert abs(module._output_layer.weight.std().item() - 0.02) < 0.001
    assert abs(module._output_layer.weight.mean().item()) < 0.001
    assert torch.equal(module._other.weight, other_weight)  # other layers untouched


def test_a_users_initializer_applies_after_the_classifier_initialisation():
    params = Params.from_file(str(CONFIGS_ROOT / "glue/rte.jsonnet"))
    vocab = Vocabulary(tokens_to_add={"labels": ["entailment", "not_entailment"]})
    model_params = params.pop("model")
    model_params["initializer"] = {
        "regexes": [["_output_layer.bias", {"type": "constant", "val": 0.5}]]
    }
    model = Model.from_params(vocab=vocab, params=model_params)
    assert torch.equal(model._task_output._output_layer.bias, torch.full((2,), 0.5))
    assert abs(model._task_output._output_layer.weight.std().item() - 0.02) < 0.01
