import pytest
import torch
from allennlp.common import Params
from allennlp.training.optimizers import Optimizer

from tft_allennlp.training.optimizers import FusedAdamWOptimizer

GROUPS = [[["bias"], {"weight_decay": 0.0}]]


def model_and_gradients(seed: int):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Linear(5, 3))
    loss = model(torch.randn(4, 6)).square().sum()
    loss.backward()
    return model


def build(model, **options) -> Optimizer:
    params = {"type": "tft_adamw", "lr": 0.01, "parameter_groups": GROUPS, **options}
    return Optimizer.from_params(
        model_parameters=list(model.named_parameters()), params=Params(params)
    )


def test_tft_adamw_fuses_on_the_cpu_and_steps_as_adamw():
    fused_model, plain_model = model_and_gradients(0), model_and_gradients(0)
    fused = build(fused_model, weight_decay=0.1)
    assert isinstance(fused, FusedAdamWOptimizer) and fused.defaults["fused"] is True
    # AllenNLP's `adamw`: PyTorch's per-parameter loop, the same groups.
    plain = Optimizer.from_params(
        model_parameters=list(plain_model.named_parameters()),
        params=Params(
            {"type": "adamw", "lr": 0.01, "parameter_groups": GROUPS, "weight_decay": 0.1}
        ),
    )
    assert plain.defaults.get("fused") in (None, False)
    # The bias group has no weight decay, the rest the configured 0.1.
    assert [group["weight_decay"] for group in fused.param_groups] == [0.0, 0.1]
    for _ in range(3):
        fused.step()
        plain.step()
    for mine, theirs in zip(fused_model.parameters(), plain_model.parameters()):
        assert torch.allclose(mine, theirs, atol=1e-6)
    # The same state, so a checkpoint of either loads in the other.
    plain.load_state_dict(fused.state_dict())


@pytest.mark.parametrize("fused, expected", [(False, False), (True, True)])
def test_tft_adamw_fused_can_be_set(fused, expected):
    optimizer = build(model_and_gradients(1), fused=fused)
    assert bool(optimizer.defaults["fused"]) is expected
