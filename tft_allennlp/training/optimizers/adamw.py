from typing import Any, Dict, List, Optional, Tuple

import torch
from allennlp.training.optimizers import Optimizer, make_parameter_groups


@Optimizer.register("tft_adamw")
class FusedAdamWOptimizer(Optimizer, torch.optim.AdamW):
    """
    AllenNLP's `adamw` (PyTorch's `AdamW`, the same arguments and defaults) that takes
    PyTorch's fused kernel wherever PyTorch has one for the parameters' device and type: one
    pass over each parameter, its gradient and its two moments, rather than a dozen elementwise
    operations each making a temporary tensor. On a CPU, where PyTorch's default is that
    one-parameter-at-a-time loop, the step of all-MiniLM-L6-v2's 22.7M parameters takes a small
    fraction of the time and memory (`benchmarks/RESULTS.md`); the update is the same up to
    floating-point rounding, and the optimizer state the same, so checkpoints of either load in
    the other.

    Registered as an `Optimizer` with name "tft_adamw".

    # Parameters

    model_parameters : `List[Tuple[str, torch.nn.Parameter]]`
        Supplied by the trainer; no config entry.
    parameter_groups : `List[Tuple[List[str], Dict[str, Any]]]`, optional
        Regexes of parameter names and the options that apply to them, as for every AllenNLP
        optimizer, e.g. `[[["bias", "LayerNorm\\\\.weight"], {"weight_decay": 0.0}]]`.
    lr : `float`, optional (default = `0.001`)
    betas : `Tuple[float, float]`, optional (default = `(0.9, 0.999)`)
    eps : `float`, optional (default = `1e-08`)
    weight_decay : `float`, optional (default = `0.01`)
    amsgrad : `bool`, optional (default = `False`)
    fused : `bool`, optional (default = `None`)
        `None` fuses where PyTorch can (float parameters on the CPU or a CUDA device) and falls
        back to the loop elsewhere; `True` requires the fused kernel, `False` never uses it.
    """

    def __init__(
        self,
        model_parameters: List[Tuple[str, torch.nn.Parameter]],
        parameter_groups: Optional[List[Tuple[List[str], Dict[str, Any]]]] = None,
        lr: float = 0.001,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-08,
        weight_decay: float = 0.01,
        amsgrad: bool = False,
        fused: Optional[bool] = None,
    ) -> None:
        groups = make_parameter_groups(model_parameters, parameter_groups)
        if fused is None:
            fused = _fusable(groups)
        super().__init__(
            params=groups,
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            fused=fused,
        )


def _fusable(groups: List[Any]) -> bool:
    """Whether every parameter is a floating-point tensor on a device with a fused AdamW."""
    parameters = [
        parameter
        for group in groups
        for parameter in (group["params"] if isinstance(group, dict) else [group])
    ]
    return bool(parameters) and all(
        parameter.is_floating_point() and parameter.device.type in ("cpu", "cuda")
        for parameter in parameters
    )
