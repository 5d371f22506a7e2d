import contextlib
from typing import Dict, Iterator, List

import torch
from allennlp.common.checks import ConfigurationError

from tft_allennlp.modules.output_regularizers.divergences import divergence_to_target
from tft_allennlp.modules.output_regularizers.output_regularizer import (
    OutputRegularizer,
    RegularisedBatch,
    check_unlabelled,
)


@OutputRegularizer.register("tft_bregman_proximal")
class BregmanProximalRegularizer(OutputRegularizer):
    """
    SMART's Bregman proximal point term `R_prox` (Jiang et al., 2020): how far the outputs are
    from those of a slowly moving copy of the model, the exponential moving average of its
    parameters.

    `theta~`, a copy of the trainable parameters (frozen ones are shared), is initialised from
    the model at construction and kept in persistent buffers of the host (the `tft_smart`
    wrapper), `_proximal__<parameter name with "__" for ".">`, so that archives and `--recover`
    restore it. After each optimizer step, at the start of the next training forward pass,
    `theta~ <- (1 - momentum) * theta + momentum * theta~` (the step is detected by the
    parameters' version counters, so gradient accumulation or a step that AMP skips moves
    `theta~` once per real step, not once per batch). `R_prox` = the mean over the examples of
    `div(f(x; theta), sg(f(x; theta~)))`, `f(x; theta~)` computed with
    `torch.func.functional_call` in evaluation mode (no dropout on the target) and without
    gradient; the divergence is the symmetric KL divergence of classification logits' softmaxes
    (its gradient flows through both of its directions) or the squared error of regression
    scores. Cost per training step: one forward pass without gradient. Reported as the metric
    `smart_proximal`.

    Registered as an `OutputRegularizer` with name "tft_bregman_proximal".

    # Parameters

    model : `torch.nn.Module`
        The wrapped model (passed by `tft_smart`).
    host : `torch.nn.Module`
        The module whose buffers keep `theta~` (passed by `tft_smart`: itself).
    weight : `float`, optional (default = `1.0`)
        `mu`; 1 in the SMART paper.
    momentum : `float`, optional (default = `0.99`)
        `beta`, the momentum of the moving average `theta~`.
    """

    metric = "smart_proximal"

    def __init__(
        self,
        model: torch.nn.Module,
        host: torch.nn.Module,
        weight: float = 1.0,
        momentum: float = 0.99,
    ) -> None:
        super().__init__(weight)
        self.check_momentum(momentum)
        self._model = model
        self._host = host
        self._momentum = momentum
        # Parameter name -> name of the host's buffer holding its moving average.
        self._buffers: Dict[str, str] = {}
        for name, parameter in model.named_parameters():
            if not parameter.requires_grad:
                continue
            buffer_name = "_proximal__" + name.replace(".", "__")
            if hasattr(host, buffer_name):
                raise ConfigurationError(f"tft_smart: two parameters map to {buffer_name}.")
            host.register_buffer(buffer_name, parameter.detach().clone(), persistent=True)
            self._buffers[name] = buffer_name
        self._parameter_versions = self._versions()

    @staticmethod
    def check_momentum(momentum: float) -> None:
        if not 0.0 <= momentum <= 1.0:
            raise ConfigurationError(
                f"tft_smart: proximal_momentum must be in [0, 1], not {momentum}."
            )

    def start_pass(self) -> None:
        """`theta~ <- (1 - beta) theta + beta theta~` if an optimizer step changed `theta`."""
        versions = self._versions()
        if versions == self._parameter_versions:
            return
        parameters = dict(self._model.named_parameters())
        averages = [getattr(self._host, buffer) for buffer in self._buffers.values()]
        current = [parameters[name].detach() for name in self._buffers]
        with torch.no_grad():
            # The optimizers' multi-tensor kernels: one launch for all parameters.
            torch._foreach_mul_(averages, self._momentum)
            torch._foreach_add_(averages, current, alpha=1.0 - self._momentum)
        self._parameter_versions = versions

    def term(self, batch: RegularisedBatch) -> torch.Tensor:
        averages = {name: getattr(self._host, buffer) for name, buffer in self._buffers.items()}
        with torch.no_grad(), _evaluation_mode(self._model):
            target = torch.func.functional_call(self._model, averages, args=(), kwargs=batch.inputs)
        check_unlabelled(self._model, target)
        return sum(  # type: ignore[return-value]
            divergence_to_target(kind, batch.outputs[key], target[key]).mean()
            for key, kind in batch.kinds.items()
        )

    def _versions(self) -> List[int]:
        parameters = dict(self._model.named_parameters())
        # The version counter of a tensor grows with each in-place change: optimizer steps.
        return [parameters[name]._version for name in self._buffers]


@contextlib.contextmanager
def _evaluation_mode(module: torch.nn.Module) -> Iterator[None]:
    """`module` in evaluation mode, each submodule's own mode restored afterwards."""
    modes = [(submodule, submodule.training) for submodule in module.modules()]
    module.eval()
    try:
        yield
    finally:
        for submodule, training in modes:
            submodule.training = training
