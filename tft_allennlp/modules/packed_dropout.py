"""
Dropout whose masks on the CPU cost a quarter of the random numbers: `PackedDropout`, and
`use_packed_dropout`, which puts it in place of a transformer's `torch.nn.Dropout` layers.

PyTorch's dropout on the CPU draws one Bernoulli sample per element (`bernoulli_`, about 6 ns
each on this project's CPU): the masks of a MiniLM step at batch 32 took 12% of the step in
float32 and 18% under bfloat16 autocast, where the matrix products are cheaper
(`benchmarks/RESULTS.md`, "Dropout masks, eager attention, bfloat16"). Here each 64-bit random
word gives four 16-bit numbers, one per element, and an element is dropped where its number is
below `round(p * 2**16)`: the same Bernoulli distribution with the rate rounded to a multiple of
2^-16 (0.1 becomes 0.100006; the kept elements are scaled by the inverse of the rounded keep
rate, so the expected output is the input). The words come from a small fast generator, numpy's
SFC64, whose state for each mask is three words of PyTorch's default generator: a run repeats
under its seed, and a recovered run goes on where it stopped (PyTorch's generator is what the
checkpoints keep). SFC64 makes a word in under half the time of PyTorch's Mersenne twister
(`random_`, one thread: 2.2 -> 1.0 ms for the words of a (32, 12, 77, 77) mask). The backward
pass keeps the mask at one byte an element for 32- and 64-bit values, where PyTorch's keeps the
scaled mask in the input's dtype, and at two for 16-bit ones (bfloat16 under autocast): the
16-bit mask is what the comparison makes, and the values' bits take it as it is, without the two
conversions through one byte (a bfloat16 (32, 12, 70, 70) dropout's forward and backward
1.15x as fast).

Applying the mask is integer work too: the kept elements' bits are ANDed with all ones and the
dropped ones' with zeros (+0.0), then the result is scaled. PyTorch's `masked_fill_` and
`torch.where` with a boolean mask, and comparing to a number, cost about 0.7 ns an element on
this project's CPU, five to ten times the vectorised `clamp`, `sub` and `bitwise_and` used here
(a bfloat16 (32, 12, 77, 77) dropout's forward and backward: 7.3 -> 3.9 ms).

On any other device, and inside `torch.compile` (which draws its own masks), the layer is
PyTorch's dropout.
"""

import threading
from typing import Any, Optional, Tuple

import numpy
import torch

# 2**16: the 16-bit numbers the mask compares, a quarter of a 64-bit word each.
_LEVELS = 1 << 16
# The integer type of each floating-point element size, whose bits the mask keeps or clears.
_BITS = {2: torch.int16, 4: torch.int32, 8: torch.int64}
# The type of the mask kept for the backward pass, by element size: one byte, but two for 16-bit
# values, whose bits take the 16-bit mask the comparison makes as it is.
_MASKS = {2: torch.int16, 4: torch.int8, 8: torch.int8}
# Outputs of a freshly set SFC64 state thrown away, as numpy's own seeding of SFC64 does.
_WARM_UP = 12
# One SFC64 generator a thread, its state set for each mask.
_STREAMS = threading.local()


class _PackedDropoutFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, inputs: torch.Tensor, p: float) -> torch.Tensor:  # type: ignore
        kept, scale = packed_dropout_mask(inputs.shape, p, _MASKS[inputs.element_size()])
        ctx.save_for_backward(kept)
        ctx.scale = scale
        return _apply(inputs, kept, scale)

    @staticmethod
    def backward(  # type: ignore
        ctx: Any, gradient: torch.Tensor
    ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        (kept,) = ctx.saved_tensors
        return _apply(gradient, kept, ctx.scale), None


def _apply(values: torch.Tensor, kept: torch.Tensor, scale: float) -> torch.Tensor:
    """`values` where `kept` is -1, times `scale`; +0.0 where it is 0."""
    bits = _BITS[values.element_size()]
    # Shape: as `values`; -1 (all bits set) where kept, 0 where dropped.
    keep_bits = kept.to(bits)
    return torch.bitwise_and(values.view(bits), keep_bits).view(values.dtype).mul_(scale)


def packed_dropout_mask(
    shape: torch.Size, p: float, dtype: torch.dtype = torch.int8
) -> Tuple[torch.Tensor, float]:
    """
    Which elements to keep, for a CPU tensor of `shape` and dropout rate `p` (0 < p < 1), from
    `random_words`: a tensor of `shape` and `dtype` (`int8` or `int16`), -1 (all bits set) where
    kept and 0 where dropped, and the scale of the kept elements,
    `2**16 / (2**16 - round(p * 2**16))`.
    """
    count = shape.numel()
    dropped_levels = round(p * _LEVELS)
    # Four 16-bit numbers in each word; every bit of a word is uniform, so each number is
    # uniform over [-2**15, 2**15), and dropped where below `threshold`.
    threshold = dropped_levels - _LEVELS // 2
    numbers = random_words((count + 3) // 4).view(torch.int16)[:count].view(shape)
    # Clamped, a number is threshold - 1 where dropped and threshold where kept; subtracted
    # from threshold - 1, 0 where dropped and -1 where kept (`int16`, as the numbers).
    kept = torch.sub(threshold - 1, numbers.clamp(threshold - 1, threshold))
    return kept.to(dtype), _LEVELS / (_LEVELS - dropped_levels)


def random_words(count: int) -> torch.Tensor:
    """
    `count` uniformly random 64-bit words (an `int64` tensor): numpy's SFC64 generator, its
    state three words of PyTorch's default CPU generator (which moves on by those three) and a
    counter of 1, after discarding its first 12 outputs.
    """
    seed = torch.empty(3, dtype=torch.int64).random_(-(2**63), 2**63 - 1).numpy()
    stream = getattr(_STREAMS, "sfc64", None)
    if stream is None:
        stream = _STREAMS.sfc64 = numpy.random.SFC64()
    state = numpy.append(seed.view(numpy.uint64), numpy.uint64(1))
    stream.state = {
        "bit_generator": "SFC64",
        "state": {"state": state},
        "has_uint32": 0,
        "uinteger": 0,
    }
    return torch.from_numpy(stream.random_raw(_WARM_UP + count)[_WARM_UP:].view(numpy.int64))


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
