from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
from allennlp.common.checks import ConfigurationError

from tft_allennlp.modules.output_regularizers.divergences import (
    adversarial_divergence,
    divergence_to_target,
    precise,
)
from tft_allennlp.modules.output_regularizers.embedding_noise import (
    EmbeddingNoise,
    embedding_layers,
)
from tft_allennlp.modules.output_regularizers.output_regularizer import (
    OutputRegularizer,
    RegularisedBatch,
    check_non_negative,
    check_unlabelled,
)


@OutputRegularizer.register("tft_smoothness_inducing")
class SmoothnessInducingRegularizer(OutputRegularizer):
    """
    SMART's smoothness-inducing adversarial regulariser `R_adv` (Jiang et al., 2020): how much
    the outputs move when the output of the embedding layer of every Hugging Face transformer
    in the model is perturbed within a small neighbourhood, in the direction that moves them
    most. With `x` the embedding-layer outputs and `f` the model's outputs:

    1. The clean outputs `f(x)` are those of the model's own pass (with the labels).
    2. `delta_0 ~ N(0, noise_std^2)`, one fresh tensor of the embedding layer's output shape
       per call of an embedding layer, in call order (a Siamese model calls its transformer
       twice per pass; each call keeps its own delta in every pass).
    3. `ascent_steps` times: `D = sum over examples of div(f(x + delta), sg(f(x)))` (`sg`: no
       gradient; the sum, not the mean, keeps each example's step independent of the batch
       size), `g = dD/d delta` by `torch.autograd.grad` (parameters' `.grad` are not touched),
       and for each token, with `||g||_inf` the largest `|g|` over the hidden dimension,

           delta <- delta + step_size * g / (||g||_inf + epsilon)

       (a normalised ascent: each token's delta moves by at most `step_size` in the infinity
       norm; a token whose gradient is 0, such as padding, stays; non-finite entries of `g`
       count as 0).
    4. `R_adv` = the mean over the examples of `div(f(x + sg(delta)), f(x))`, where for
       classification each direction is taken against the other side without gradient, as in
       mt-dnn: `KL(sg(q) || p) + KL(sg(p) || q)`, `p` adversarial, `q` clean (its value is the
       symmetric KL divergence); for regression `(f(x + delta) - sg(f(x)))^2`. The gradient of
       `R_adv` reaches the model's parameters only: the deltas are detached leaves.

    The divergence of classification logits is the symmetric KL divergence of their softmaxes,
    `KL(p || q) + KL(q || p) = sum_c (p_c - q_c) (log p_c - log q_c)`, that of regression
    scores the squared error; those of several outputs add up. With `ascent_steps = 0` the term
    is the divergence under the random noise alone. The extra passes run in the model's
    current mode (dropout included, as in mt-dnn). Cost per training step: one extra forward
    pass and one backward pass to the embeddings per ascent step, and one forward and backward
    pass for `R_adv`. Reported as the metric `smart_adversarial`.

    Registered as an `OutputRegularizer` with name "tft_smoothness_inducing".

    # Parameters

    model : `torch.nn.Module`
        The wrapped model (passed by `tft_smart`); it must contain at least one
        `pretrained_transformer` embedder (AllenNLP's `PretrainedTransformerEmbedder`, its
        subclasses and the one inside the `pretrained_transformer` backbone), whose transformer
        has an `embeddings` module (BERT, RoBERTa, DistilBERT, MPNet, ELECTRA, DeBERTa-v2,
        ModernBERT).
    weight : `float`, optional (default = `1.0`)
        `lambda_s`; the SMART paper used 1, 3 or 5.
    noise_std : `float`, optional (default = `1e-5`)
        `sigma`, the standard deviation of the initial noise.
    epsilon : `float`, optional (default = `1e-6`)
        Added to each token's `||g||_inf` in the ascent step: where that is far below
        `epsilon` (small gradients, as with a freshly initialised classifier), the step is
        shorter than `step_size`.
    step_size : `float`, optional (default = `1e-3`)
        `eta`, the size of an ascent step (in the infinity norm of each token's delta).
    ascent_steps : `int`, optional (default = `1`)
        The number of ascent steps, one in the SMART paper.
    """

    metric = "smart_adversarial"

    def __init__(
        self,
        model: torch.nn.Module,
        weight: float = 1.0,
        noise_std: float = 1e-5,
        epsilon: float = 1e-6,
        step_size: float = 1e-3,
        ascent_steps: int = 1,
    ) -> None:
        super().__init__(weight)
        check_non_negative(
            noise_std=noise_std, epsilon=epsilon, step_size=step_size, ascent_steps=ascent_steps
        )
        self._model = model
        self._noise_std = noise_std
        self._epsilon = epsilon
        self._step_size = step_size
        self._ascent_steps = int(ascent_steps)
        self._noise = EmbeddingNoise()
        for embeddings in embedding_layers(model):
            embeddings.register_forward_hook(self._noise)

    def term(self, batch: RegularisedBatch) -> torch.Tensor:
        inputs, outputs, kinds = batch.inputs, batch.outputs, batch.kinds
        deltas: Optional[List[torch.Tensor]] = None
        for _ in range(self._ascent_steps):
            noisy, deltas = self._perturbed_pass(inputs, deltas, requires_grad=True)
            # Shape: (): summed over the examples, so that each example's step is its own.
            divergence = sum(
                divergence_to_target(kind, noisy[key], outputs[key]).sum()
                for key, kind in kinds.items()
            )
            deltas = [
                self._ascent(delta, gradient) for delta, gradient in _gradients(divergence, deltas)
            ]
        adversarial, _ = self._perturbed_pass(inputs, deltas, requires_grad=False)
        return sum(  # type: ignore[return-value]
            adversarial_divergence(kind, adversarial[key], outputs[key]).mean()
            for key, kind in kinds.items()
        )

    def _ascent(self, delta: torch.Tensor, gradient: Optional[torch.Tensor]) -> torch.Tensor:
        """One normalised ascent step of `delta`, shape `(..., hidden_dim)`."""
        if gradient is None:
            return delta.detach()
        gradient = torch.nan_to_num(gradient.detach(), nan=0.0, posinf=0.0, neginf=0.0)
        # Shape: (..., 1): each token's largest |g| over the hidden dimension, plus epsilon; a
        # token with no gradient at all (padding) stays where it is, also with epsilon 0.
        scale = gradient.abs().amax(dim=-1, keepdim=True) + self._epsilon
        scale = scale.clamp_min(torch.finfo(scale.dtype).tiny)
        return (delta.detach() + self._step_size * gradient / scale).detach()

    def _perturbed_pass(
        self,
        inputs: Dict[str, Any],
        deltas: Optional[List[torch.Tensor]],
        requires_grad: bool,
    ) -> Tuple[Dict[str, torch.Tensor], List[torch.Tensor]]:
        """
        The model's outputs with `deltas` (fresh noise where `None`) added to the embedding
        layers' outputs, and the deltas used.
        """
        with self._noise.adding(deltas, self._sample_noise, requires_grad) as used:
            output = self._model(**inputs)
        check_unlabelled(self._model, output)
        if not used:
            raise ConfigurationError(
                f"tft_smart: {type(self._model).__name__} called no transformer embedding layer."
            )
        return output, used

    def _sample_noise(self, embedded: torch.Tensor) -> torch.Tensor:
        """`delta_0 ~ N(0, noise_std^2)` of `embedded`'s shape, in at least float32."""
        return (
            torch.randn(embedded.shape, dtype=precise(embedded.dtype), device=embedded.device)
            * self._noise_std
        )


def _gradients(
    divergence: Any, deltas: Sequence[torch.Tensor]
) -> List[Tuple[torch.Tensor, Optional[torch.Tensor]]]:
    """Each delta with the gradient of `divergence` by it (None where it has none)."""
    gradients: Sequence[Optional[torch.Tensor]] = [None] * len(deltas)
    if isinstance(divergence, torch.Tensor) and divergence.requires_grad:
        gradients = torch.autograd.grad(divergence, deltas, allow_unused=True)
    return list(zip(deltas, gradients))
