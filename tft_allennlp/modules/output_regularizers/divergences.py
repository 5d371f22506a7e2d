"""
The divergences of SMART's terms between two outputs of a model, per example, for each kind of
output (`tft_allennlp.common.output_kinds`): the symmetric KL divergence of the softmaxes of
classification logits, the squared error of regression scores. Computed in at least float32.
"""

import torch

from tft_allennlp.common.output_kinds import CLASSIFICATION, REGRESSION


def precise(dtype: torch.dtype) -> torch.dtype:
    """`dtype`, or float32 where it is less precise (half precision under AMP)."""
    return torch.promote_types(dtype, torch.float32)


def symmetric_kl_divergence(logits: torch.Tensor, target_logits: torch.Tensor) -> torch.Tensor:
    """
    `KL(p || q) + KL(q || p)` of `p = softmax(logits)` and `q = softmax(target_logits)`, both of
    shape `(batch_size, num_labels)`, per example: shape `(batch_size,)`, in at least float32.
    The gradient flows through each argument that carries one.
    """
    # Shape: (batch_size, num_labels)
    log_p = torch.log_softmax(logits.to(precise(logits.dtype)), dim=-1)
    log_q = torch.log_softmax(target_logits.to(precise(target_logits.dtype)), dim=-1)
    return ((log_p.exp() - log_q.exp()) * (log_p - log_q)).sum(dim=-1)


def divergence_to_target(kind: str, outputs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Per-example divergence of `outputs` from `target`, which gets no gradient."""
    if kind == CLASSIFICATION:
        return symmetric_kl_divergence(outputs, target.detach())
    outputs = outputs.to(precise(outputs.dtype))
    return (outputs - target.detach().to(outputs.dtype)) ** 2


def adversarial_divergence(
    kind: str, adversarial: torch.Tensor, clean: torch.Tensor
) -> torch.Tensor:
    """
    Per-example `KL(sg(q) || p) + KL(sg(p) || q)` (mt-dnn's symmetric KL criterion: each side
    against the other without gradient) for classification, `(adversarial - sg(clean))^2` for
    regression.
    """
    if kind == REGRESSION:
        return divergence_to_target(kind, adversarial, clean)
    # Shape: (batch_size, num_labels)
    log_p = torch.log_softmax(adversarial.to(precise(adversarial.dtype)), dim=-1)
    log_q = torch.log_softmax(clean.to(precise(clean.dtype)), dim=-1)
    q_to_p = (log_q.detach().exp() * (log_q.detach() - log_p)).sum(dim=-1)
    p_to_q = (log_p.detach().exp() * (log_p.detach() - log_q)).sum(dim=-1)
    return q_to_p + p_to_q
