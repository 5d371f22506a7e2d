"""
Dropout whose masks on the CPU cost a quarter of the random numbers: `PackedDropout`, and
`use_packed_dropout`, which puts it in place of a transformer's `torch.nn.Dropout` layers.

PyTorch's dropout on the CPU draws one Bernoulli sample per element (`bernoulli_`, about 6 ns
each on this project's CPU): the masks of a MiniLM step at batch 32 took 12% of the step in
float32 and 18% under bfloat16 autocast, where the matrix products are cheaper
(`benchmarks/RESULTS.md`, "Dropout masks, eager attention, bfloat16"). Here each 64-bit random
word of PyTorch's generator gives four 16-bit numbers, one per element, and an element is
dropped where its number is below `round(p * 2**16)`: the same Bernoulli distribution with the
rate rounded to a multiple of 2^-16 (0.1 becomes 0.100006; the kept elements are scaled by the
inverse of the rounded keep rate, so the expected output is the input), from the same seeded
generator (runs repeat, and a recovered run goes on where it stopped). The backward pass keeps
the boolean mask, one byte an element where PyTorch's keeps the scaled mask in the input's dtype.

On any other device, and inside `torch.compile` (which draws its own masks), the layer is
PyTorch's dropout.
"""

from typing import Any, Optional, Tuple

import torch

# 2**16: the 16-bit numbers the mask compares, a quarter of a 64-bit word each.
_LEVELS = 1 << 16


class _PackedDropoutFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, inputs: torch.Tensor, p: float) -> torch.Tensor:  # type: ignore
        dropped, scale = packed_dropout_mask(inputs.shape, p)
        ctx.save_for_backward(dropped)
        ctx.scale = scale
        return (inputs * scale).masked_fill_(dropped, 0.0)

    @staticmethod
    def backward(  # type: ignore
        ctx: Any, gradient: torch.Tensor
    ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        (dropped,) = ctx.saved_tensors
        return (gradient * ctx.scale).masked_fill_(dropped, 0.0), None


def packed_dropout_mask(shape: torch.Size, p: float) -> Tuple[torch.Tensor, float]:
    """
    Where to drop, for a CPU tensor of `shape` and dropout rate `p` (0 < p < 1), drawn from
    PyTorch's default CPU generator: a boolean tensor of `shape`, true where dropped, and the
    scale of the kept elements, `2**16 / (2**16 - round(p * 2**16))`.
    """
    count = shape.numel()
    threshold = round(p * _LEVELS)
    # Four 16-bit numbers in each word; every bit of a word is uniform (random_ over the whole
    # int64 range), so each number is uniform over [-2**15, 2**15).
    words = torch.empty((count + 3) // 4, dtype=torch.int64)
    words.random_(-(2**63), 2**63 - 1)
    numbers = words.view(torch.int16)[:count].view(shape)
    dropped = numbers < threshold - _LEVELS // 2
    return dropped, _LEVELS / (_LEVELS - threshold)


class PackedDropout(torch.nn.Dropout):
    """
    `torch.nn.Dropout`, with masks from packed random words on the CPU (see the module's
    docstring). An instance is a `torch.nn.Dropout`: code that looks for dropout layers finds it.

    # Parameters

    p : `float`, optional (default = `0.5`)
        The probability of dropping an element (rounded to a multiple of 2^-16 on the CPU).
    """

    def __init__(self, p: float = 0.5) -> None:
        super().__init__(p)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        if (
            not self.training
            or not 0.0 < self.p < 1.0
            or inputs.device.type != "cpu"
            or torch.compiler.is_compiling()
            or round(self.p * _LEVELS) in (0, _LEVELS)
        ):
            return super().forward(inputs)
        return _PackedDropoutFunction.apply(inputs, self.p)


def use_packed_dropout(module: torch.nn.Module) -> int:
    """
    Replaces every `torch.nn.Dropout` (of that exact class) inside `module` by a `PackedDropout`
    of the same rate; returns how many. Dropout inside other layers (the `dropout_p` of PyTorch's
    scaled-dot-product attention, which transformers' `"sdpa"` attention passes) stays as it is.
    """
    replaced = 0
    for parent in module.modules():
        for name, child in list(parent.named_children()):
            if type(child) is torch.nn.Dropout:
                packed = PackedDropout(child.p)
                packed.train(child.training)
                setattr(parent, name, packed)
                replaced += 1
    return replaced
