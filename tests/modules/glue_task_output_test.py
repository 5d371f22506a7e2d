import pytest
import torch
from allennlp.common import Params
from allennlp.data import Vocabulary
from allennlp.nn import InitializerApplicator

from tft_allennlp.modules.glue_task_output import GlueTaskOutput


@pytest.mark.parametrize(
    "task, bias",
    [
        ("stsb", [2.5]),  # STS-B's scores lie in [0, 5]
        ({"name": "rating", "regression": True, "score_range": [1, 4]}, [2.5]),
        ({"name": "rating", "regression": True, "score_range": [-1, 0]}, [-0.5]),
        ({"name": "rating", "regression": True}, [0.0]),  # no range given: BERT's zero bias
        ("mrpc", [0.0, 0.0]),  # a classification keeps BERT's zero bias
    ],
)
def test_a_regression_starts_at_the_middle_of_its_score_range(task, bias):
    output = GlueTaskOutput(Vocabulary(), task, input_dim=4)
    assert output._output_layer.bias.tolist() == bias
    # The weights stay BERT's classifier's: normal with std 0.02, not touched by the bias.
    assert output._output_layer.weight.abs().max() < 0.1


def test_a_zero_vector_predicts_the_middle_and_an_initializer_still_overrides_it():
    output = GlueTaskOutput(Vocabulary(), "stsb", input_dim=4).eval()
    assert output(torch.zeros(3, 4))["score"].tolist() == [2.5, 2.5, 2.5]
    # As a config's `model.initializer` does it, after the model is built.
    regexes = [["_output_layer.bias", {"type": "constant", "val": 0.0}]]
    InitializerApplicator.from_params(Params({"regexes": regexes}))(output)
    assert output(torch.zeros(3, 4))["score"].tolist() == [0.0, 0.0, 0.0]
