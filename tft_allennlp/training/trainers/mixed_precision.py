import contextlib
import logging
from typing import Any, ContextManager, Dict, List, Optional, Union

import torch
from allennlp.common import Lazy
from allennlp.common.checks import ConfigurationError
from allennlp.data import DataLoader, TensorDict
from allennlp.models import Model
from allennlp.nn.parallel import DdpAccelerator
from allennlp.training.callbacks import TrainerCallback
from allennlp.training.checkpointer import Checkpointer
from allennlp.training.gradient_descent_trainer import GradientDescentTrainer
from allennlp.training.learning_rate_schedulers import LearningRateScheduler
from allennlp.training.momentum_schedulers import MomentumScheduler
from allennlp.training.moving_average import MovingAverage
from allennlp.training.optimizers import Optimizer
from allennlp.training.trainer import Trainer

from tft_allennlp.common import freed_memory
from tft_allennlp.common.onednn_caches import bound_onednn_caches

logger = logging.getLogger(__name__)

PRECISIONS = ("auto", "bfloat16", "float16", "float32")
# bfloat16 tensor cores arrived with compute capability 8.0 (Ampere); older cards emulate it.
_BFLOAT16_CAPABILITY = (8, 0)


def amp_dtype(
    precision: str, device: torch.device, capability: Optional[tuple] = None
) -> Optional[torch.dtype]:
    """
    The dtype that autocast computes in for `precision` on `device`, or `None` for float32 (no
    autocast). On a CUDA device, `"auto"` is bfloat16 on compute capability 8.0 or newer (A100,
    H100, ...) and float16 on older ones; `capability` defaults to the device's. On a CPU, only
    `"bfloat16"` autocasts (CPUs with AVX512-BF16 or AMX run its matrix products about twice as
    fast as float32's; others emulate it, slower, with a warning).

    Raises a one-line `ConfigurationError` for an unknown precision, for `"auto"` and
    `"float16"` on a CPU, and for bfloat16 on a card without bfloat16 tensor cores.
    """
    if precision not in PRECISIONS:
        raise ConfigurationError(
            f"tft_mixed_precision: precision {precision!r} is not one of {', '.join(PRECISIONS)}."
        )
    if precision == "float32":
        return None
    if device.type != "cuda":
        if precision == "bfloat16":
            if not torch.ops.mkldnn._is_mkldnn_bf16_supported():
                logger.warning(
                    "tft_mixed_precision: this CPU has no native bfloat16 (AVX512-BF16 or AMX): "
                    "bfloat16 is emulated, slower than float32."
                )
            return torch.bfloat16
        raise ConfigurationError(
            f"tft_mixed_precision: precision {precision!r} needs a CUDA device, and this worker "
            f'trains on {device}; set "trainer.precision" to "bfloat16" (mixed precision on '
            'the CPU) or "float32".'
        )
    if capability is None:
        capability = torch.cuda.get_device_capability(device)
    bfloat16 = tuple(capability) >= _BFLOAT16_CAPABILITY
    if precision == "bfloat16" and not bfloat16:
        raise ConfigurationError(
            f"tft_mixed_precision: {device} (compute capability {capability[0]}.{capability[1]}) "
            'has no bfloat16 tensor cores; use "precision": "float16" or "auto".'
        )
    if precision == "float16" or not bfloat16:
        return torch.float16
    return torch.bfloat16


class _GradScalerState(TrainerCallback):
    """Carries a gradient scaler's state (its loss scale) through checkpoints and `--recover`."""

    def __init__(self, serialization_dir: str, scaler: torch.amp.GradScaler) -> None:
        super().__init__(serialization_dir)
        self._scaler = scaler

    def state_dict(self) -> Dict[str, Any]:
        return self._scaler.state_dict()

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self._scaler.load_state_dict(state_dict)


@Trainer.register("tft_mixed_precision", constructor="from_partial_objects")
class MixedPrecisionTrainer(GradientDescentTrainer):
    """
    AllenNLP's `gradient_descent` trainer with automatic mixed precision in bfloat16 or float16,
    chosen in the config. AllenNLP's own `use_amp` computes in float16 only; bfloat16 has float32's
    exponent range, so it needs no loss scaling and is the natural precision on Ampere and Hopper.

    Each forward pass (model and loss, training and validation) runs under `torch.autocast` with
    the chosen dtype; backward passes and optimizer steps stay in float32 master weights. Float16
    gets a gradient scaler (the distributed accelerator's, under DDP), whose state is saved with
    every checkpoint so that `--recover` resumes with the same loss scale. Float32 trains exactly
    as `gradient_descent` does.

    Registered as a `Trainer` with name "tft_mixed_precision". It takes every parameter of
    AllenNLP's `gradient_descent` trainer except `use_amp` and `grad_scaling`, which `precision`
    replaces:

    # Parameters

    precision : `str`, optional (default = `"auto"`)
        `"auto"`: bfloat16 where the CUDA device supports it (compute capability 8.0 or newer),
        float16 with a gradient scaler elsewhere; `"bfloat16"`, `"float16"`: that dtype (bfloat16
        on an older card is refused); `"float32"`: no mixed precision. A CPU worker takes
        `"bfloat16"` (fast with AVX512-BF16 or AMX) or `"float32"`; the others are refused with a
        `ConfigurationError` before training starts.
    onednn_cache_capacity : `int`, optional (default = `None`)
        On a CPU in bfloat16: how many compiled oneDNN kernels to keep, in each of its two caches
        (`tft_allennlp.common.onednn_caches`; unless the environment sets them). By default
        PyTorch's 1,024: with batch lengths that vary, the caches grow by half a gigabyte over a
        MiniLM epoch, for kernels seldom met again; 64 keeps a step's own kernels and brings the
        peak memory of a bfloat16 MRPC epoch below float32's. Ignored elsewhere.
    reuse_freed_memory : `bool`, optional (default = `False`)
        On a CPU: keep the memory each step frees for the next (glibc's `mallopt`; see
        `tft_allennlp.common.freed_memory`), saving the kernel's page faults of fresh memory at
        every step (4-8% of a MiniLM MRPC epoch's time) for about 0.1 GB more peak memory.
        Ignored on a GPU.
    """

    def __init__(
        self,
        *args: Any,
        precision: str = "auto",
        onednn_cache_capacity: Optional[int] = None,
        reuse_freed_memory: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._amp_dtype = amp_dtype(precision, self.cuda_device)
        if (
            onednn_cache_capacity is not None
            and self._amp_dtype is not None
            and self.cuda_device.type == "cpu"
        ):
            # Before the first step: oneDNN reads the sizes once, when it first runs.
            bound_onednn_caches(onednn_cache_capacity)
        if reuse_freed_memory and self.cuda_device.type == "cpu":
            freed_memory.reuse_freed_memory()
        if self._amp_dtype == torch.float16:
            scaler: torch.amp.GradScaler = (
                torch.amp.GradScaler("cuda")
                if self._ddp_wrapped_model is None
                else self._ddp_wrapped_model.init_grad_scaler()
            )
            # AllenNLP annotates its scaler as torch.cuda.amp's, a deprecated subclass of this one.
            self._scaler = scaler  # type: ignore[assignment]
            # Checkpointed and restored with the callbacks' states, after the configured ones.
            self._callbacks.append(_GradScalerState(self._serialization_dir, scaler))
        logger.info(
            "Training in %s%s.",
            self._amp_dtype or torch.float32,
            " with a gradient scaler" if self._scaler is not None else "",
        )

    def _autocast(self) -> ContextManager:
        if self._amp_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.cuda_device.type, dtype=self._amp_dtype)

    def batch_outputs(self, batch: TensorDict, for_training: bool) -> Dict[str, torch.Tensor]:
        with self._autocast():
            return super().batch_outputs(batch, for_training)

    def rescale_gradients(self) -> Optional[float]:
        """
        AllenNLP's, with the same gradients bit for bit, for a number `grad_norm` outside DDP
        and without a gradient scaler: the gradients' norms in one call, and no multiplication
        when the norm is within the bound (PyTorch's `clip_grad_norm_` multiplies every gradient
        by its coefficient clamped to 1, a pass over all of them: 2% of a MiniLM CPU step).
        """
        if (
            isinstance(self._grad_norm, bool)
            or self._scaler is not None
            or self._ddp_wrapped_model is not None
        ):
            return super().rescale_gradients()
        gradients = [p.grad for p in self.model.parameters() if p.grad is not None]
        if not gradients:
            return 0.0
        total = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(gradients)))
        # As clip_grad_norm_ computes it.
        coefficient = self._grad_norm / (total + 1e-6)
        if coefficient < 1.0:
            torch._foreach_mul_(gradients, coefficient)
        return total.item()

    @classmethod
    def from_partial_objects(  # type: ignore[override]
        cls,
        model: Model,
        serialization_dir: str,
        data_loader: DataLoader,
        validation_data_loader: Optional[DataLoader] = None,
        local_rank: int = 0,
        patience: Optional[int] = None,
        validation_metric: Union[str, List[str]] = "-loss",
        num_epochs: int = 20,
        cuda_device: Optional[Union[int, torch.device]] = None,
        grad_norm: Union[float, bool] = False,
        grad_clipping: Optional[float] = None,
        distributed: bool = False,
        world_size: int = 1,
        num_gradient_accumulation_steps: int = 1,
        precision: str = "auto",
        onednn_cache_capacity: Optional[int] = None,
        reuse_freed_memory: bool = False,
        no_grad: Optional[List[str]] = None,
        optimizer: Lazy[Optimizer] = Lazy(Optimizer.default),
        learning_rate_scheduler: Optional[Lazy[LearningRateScheduler]] = None,
        momentum_scheduler: Optional[Lazy[MomentumScheduler]] = None,
        moving_average: Optional[Lazy[MovingAverage]] = None,
        checkpointer: Optional[Lazy[Checkpointer]] = Lazy(Checkpointer),
        callbacks: Optional[List[Lazy[TrainerCallback]]] = None,
        enable_default_callbacks: bool = True,
        run_confidence_checks: bool = True,
        ddp_accelerator: Optional[DdpAccelerator] = None,
    ) -> Trainer:
        """
        `gradient_descent`'s constructor with `precision` in place of `use_amp` and
        `grad_scaling` (a config that sets either is refused as an unknown parameter).
        """
        return super().from_partial_objects(
            model=model,
            serialization_dir=serialization_dir,
            data_loader=data_loader,
            validation_data_loader=validation_data_loader,
            local_rank=local_rank,
            patience=patience,
            validation_metric=validation_metric,
            num_epochs=num_epochs,
            cuda_device=cuda_device,
            grad_norm=grad_norm,
            grad_clipping=grad_clipping,
            distributed=distributed,
            world_size=world_size,
            num_gradient_accumulation_steps=num_gradient_accumulation_steps,
            use_amp=False,
            no_grad=no_grad,
            optimizer=optimizer,
            learning_rate_scheduler=learning_rate_scheduler,
            momentum_scheduler=momentum_scheduler,
            moving_average=moving_average,
            checkpointer=checkpointer,
            callbacks=callbacks,
            enable_default_callbacks=enable_default_callbacks,
            run_confidence_checks=run_confidence_checks,
            grad_scaling=False,
            ddp_accelerator=ddp_accelerator,
            precision=precision,
            onednn_cache_capacity=onednn_cache_capacity,
            reuse_freed_memory=reuse_freed_memory,
        )
