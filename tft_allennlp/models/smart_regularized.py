import contextlib
import logging
from typing import Callable, Dict, Iterator, List, Optional, Tuple

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.models.model import Model
from allennlp.modules.token_embedders import PretrainedTransformerEmbedder
from allennlp.nn.util import dist_reduce_sum

logger = logging.getLogger(__name__)

CLASSIFICATION = "classification"
REGRESSION = "regression"
KINDS = (CLASSIFICATION, REGRESSION)


@Model.register("tft_smart")
class SmartRegularizedModel(Model):
    """
    SMART (Jiang et al., 2020, "SMART: Robust and Efficient Fine-Tuning for Pre-trained Natural
    Language Models through Principled Regularized Optimization") around any model of the
    plugin: the wrapped `model` runs as it is, and in training its `loss` gets

        loss + adversarial_weight * R_adv + proximal_weight * R_prox

    - `R_adv`, the smoothness-inducing adversarial regulariser: how much the outputs move when
      the output of the embedding layer of every Hugging Face transformer in `model` is
      perturbed within a small neighbourhood, in the direction that moves them most;
    - `R_prox`, Bregman proximal point optimisation: how far the outputs are from those of a
      slowly moving copy of the model, the exponential moving average of its parameters.

    Outputs and divergences. `outputs` names the output keys that are regularised and how: for
    `"classification"` keys, logits of shape `(batch_size, num_labels)`, the divergence of two
    outputs is the symmetric KL divergence of their softmaxes,
    `KL(p || q) + KL(q || p) = sum_c (p_c - q_c) (log p_c - log q_c)`; for `"regression"` keys,
    scores of shape `(batch_size,)`, the squared error. By default every output named `logits`
    or ending in `_logits` is a classification output and every output named `score` or ending
    in `_score` a regression output, and outputs of another shape are left out (the
    paraphrase injector's `phrase_logits`, `(batch_size, num_pairs, num_labels)` with a mask, so
    that only its `sentence_logits` are regularised). Only the keys present in a batch's output
    count; the divergences of several keys add up, each averaged over the batch's examples.

    Switching SMART on or off per task in a multitask model: `tft_glue_multitask` (AllenNLP's
    `MultiTaskModel`) prefixes each head's outputs with the head name (`sst2_logits`,
    `mrpc_logits`, `stsb_score`) and a batch holds one task, so `outputs: {"sst2_logits":
    "classification"}` regularises the SST-2 batches only and leaves the others' loss exactly
    as it was (Lai's multitask setup: SST-2 regularised, paraphrase and similarity not).

    The adversarial term, with `x` the embedding-layer outputs and `f` the model's outputs:

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

    With `ascent_steps = 0` the term is the divergence under the random noise alone. The extra
    passes run in the model's current mode (dropout included, as in mt-dnn), without the label
    arguments (`label_arguments`), so that they compute no loss and update no metric.

    The proximal term: `theta~`, a copy of the trainable parameters (frozen ones are shared)
    initialised from the model at construction and kept in persistent buffers of this module,
    so that archives and `--recover` restore it. After each optimizer step, at the start of the
    next training forward pass, `theta~ <- (1 - proximal_momentum) * theta +
    proximal_momentum * theta~` (the step is detected by the parameters' version counters, so
    gradient accumulation or a step that AMP skips moves `theta~` once per real step, not once
    per batch). `R_prox` = the mean over the examples of `div(f(x; theta), sg(f(x; theta~)))`,
    `f(x; theta~)` computed with `torch.func.functional_call` in evaluation mode (no dropout on
    the target) and without gradient; the symmetric KL's gradient flows through both of its
    directions.

    Both terms are computed in training mode only, for a batch whose output has a `loss` and
    at least one regularised output, with gradients enabled; an empty batch (the padding
    batches of `tft_streaming`) returns the wrapped model's output unchanged. A weight of 0
    switches a term off: no extra pass and, for the proximal term, no copy of the parameters.
    The unweighted terms are reported as the metrics `smart_adversarial` and `smart_proximal`,
    averaged over the batches since the last reset (present only where some batch computed
    them), besides the wrapped model's own metrics.

    Cost per training step: one extra forward pass and one backward pass to the embeddings per
    ascent step, one forward and backward pass for `R_adv`, and one forward pass without
    gradient for `R_prox` (benchmarks/RESULTS.md).

    Predictors: `Predictor.from_archive` reads a model class's `default_predictor`, so this
    class names `tft_sentence_pair` (the GLUE models' predictor); give `--predictor` for other
    wrapped models (`tft_phrase_pairs` for the injector, `multitask` for the multitask model).
    An instance's `default_predictor` is its wrapped model's.

    Registered as a `Model` with name "tft_smart".

    # Parameters

    vocab : `Vocabulary`
        Shared with the wrapped model.
    model : `Model`
        The model to regularise, any of the plugin's (`tft_glue_classifier`,
        `tft_siamese_pair_classifier`, `tft_glue_multitask`, `tft_paraphrase_injector`); it
        must contain at least one `pretrained_transformer` embedder (AllenNLP's
        `PretrainedTransformerEmbedder`, its subclasses and the one inside the
        `pretrained_transformer` backbone), whose transformer has an `embeddings` module (BERT,
        RoBERTa, DistilBERT, MPNet, ELECTRA, DeBERTa-v2).
    adversarial_weight : `float`, optional (default = `1.0`)
        `lambda_s`, the weight of the adversarial term; the SMART paper used 1, 3 or 5.
    proximal_weight : `float`, optional (default = `1.0`)
        `mu`, the weight of the proximal term; 1 in the SMART paper.
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
    proximal_momentum : `float`, optional (default = `0.99`)
        `beta`, the momentum of the moving average `theta~`.
    outputs : `Dict[str, str]`, optional (default = every `logits`/`*_logits` and
        `score`/`*_score` output, by shape)
        The regularised output keys, each `"classification"` or `"regression"`. A key named
        here whose tensor is not `(batch_size, num_labels)` logits or `(batch_size,)` scores
        raises a `ConfigurationError`.
    label_arguments : `List[str]`, optional (default = `["label", "labels", "phrase_labels"]`)
        The forward arguments that carry gold labels, left out of the extra passes. An extra
        pass that still returns a `loss` raises a `ConfigurationError` asking for the missing
        name.
    """

    default_predictor = "tft_sentence_pair"

    def __init__(
        self,
        vocab: Vocabulary,
        model: Model,
        adversarial_weight: float = 1.0,
        proximal_weight: float = 1.0,
        noise_std: float = 1e-5,
        epsilon: float = 1e-6,
        step_size: float = 1e-3,
        ascent_steps: int = 1,
        proximal_momentum: float = 0.99,
        outputs: Optional[Dict[str, str]] = None,
        label_arguments: Optional[List[str]] = None,
    ) -> None:
        super().__init__(vocab)
        for name, value in [
            ("adversarial_weight", adversarial_weight),
            ("proximal_weight", proximal_weight),
            ("noise_std", noise_std),
            ("epsilon", epsilon),
            ("step_size", step_size),
            ("ascent_steps", ascent_steps),
        ]:
            if value < 0:
                raise ConfigurationError(f"tft_smart: {name} must be >= 0, not {value}.")
        if not 0.0 <= proximal_momentum <= 1.0:
            raise ConfigurationError(
                f"tft_smart: proximal_momentum must be in [0, 1], not {proximal_momentum}."
            )
        for key, kind in (outputs or {}).items():
            if kind not in KINDS:
                raise ConfigurationError(
                    f"tft_smart: outputs[{key!r}] must be one of {list(KINDS)}, not {kind!r}."
                )
        self._model = model
        self.default_predictor = model.default_predictor
        self._adversarial_weight = adversarial_weight
        self._proximal_weight = proximal_weight
        self._noise_std = noise_std
        self._epsilon = epsilon
        self._step_size = step_size
        self._ascent_steps = int(ascent_steps)
        self._proximal_momentum = proximal_momentum
        self._outputs = dict(outputs) if outputs is not None else None
        self._label_arguments = set(
            label_arguments if label_arguments is not None else ["label", "labels", "phrase_labels"]
        )
        self._means = {"smart_adversarial": _RunningMean(), "smart_proximal": _RunningMean()}
        self._warned_no_outputs = False

        self._noise = _EmbeddingNoise()
        if adversarial_weight > 0:
            for embeddings in embedding_layers(model):
                embeddings.register_forward_hook(self._noise)

        # Inner parameter name -> name of the buffer holding its moving average.
        self._proximal_buffers: Dict[str, str] = {}
        if proximal_weight > 0:
            for name, parameter in model.named_parameters():
                if not parameter.requires_grad:
                    continue
                buffer_name = "_proximal__" + name.replace(".", "__")
                if hasattr(self, buffer_name):
                    raise ConfigurationError(f"tft_smart: two parameters map to {buffer_name}.")
                self.register_buffer(buffer_name, parameter.detach().clone(), persistent=True)
                self._proximal_buffers[name] = buffer_name
        self._parameter_versions = self._versions()

    @property
    def inner_model(self) -> Model:
        """The wrapped model."""
        return self._model

    def forward(self, **inputs) -> Dict[str, torch.Tensor]:  # type: ignore
        """
        # Parameters

        **inputs
            The wrapped model's forward arguments, passed on unchanged.

        # Returns

        The wrapped model's output dictionary; in training, its `loss` plus the weighted SMART
        terms.
        """
        if self.training and self._proximal_buffers:
            self._update_proximal_point()
        output = self._model(**inputs)
        if not (self.training and torch.is_grad_enabled() and "loss" in output):
            return output
        kinds = self._regularised_outputs(output)
        # An empty padding batch of `tft_streaming`: nothing to regularise.
        if not kinds or any(output[key].size(0) == 0 for key in kinds):
            return output
        unlabelled = {
            key: value for key, value in inputs.items() if key not in self._label_arguments
        }
        loss = output["loss"]
        if self._adversarial_weight > 0:
            # Shape: ()
            adversarial = self._adversarial_term(unlabelled, output, kinds)
            self._means["smart_adversarial"].add(adversarial)
            loss = loss + self._adversarial_weight * adversarial
        if self._proximal_buffers:
            # Shape: ()
            proximal = self._proximal_term(unlabelled, output, kinds)
            self._means["smart_proximal"].add(proximal)
            loss = loss + self._proximal_weight * proximal
        output["loss"] = loss
        return output

    def _regularised_outputs(self, output: Dict[str, torch.Tensor]) -> Dict[str, str]:
        """The batch's regularised output keys and their kinds."""
        kinds: Dict[str, str] = {}
        if self._outputs is not None:
            for key, kind in self._outputs.items():
                if key not in output:
                    continue
                if not _has_shape(output[key], kind):
                    shape = tuple(getattr(output[key], "shape", ()))
                    raise ConfigurationError(
                        f"tft_smart: output {key!r} of shape {shape} is not "
                        + (
                            "(batch_size, num_labels) logits"
                            if kind == CLASSIFICATION
                            else "(batch_size,) scores"
                        )
                        + f", which a {kind} output must be."
                    )
                kinds[key] = kind
            return kinds
        for key, value in output.items():
            kind = _default_kind(key)
            if kind is not None and _has_shape(value, kind):
                kinds[key] = kind
        if not kinds and not self._warned_no_outputs:
            logger.warning(
                "tft_smart: no output of %s is regularised (none is named logits, *_logits, "
                "score or *_score with the right shape): name them in `outputs`.",
                sorted(output),
            )
            self._warned_no_outputs = True
        return kinds

    def _adversarial_term(
        self,
        inputs: Dict[str, object],
        clean: Dict[str, torch.Tensor],
        kinds: Dict[str, str],
    ) -> torch.Tensor:
        deltas: Optional[List[torch.Tensor]] = None
        for _ in range(self._ascent_steps):
            noisy, deltas = self._perturbed_pass(inputs, deltas, requires_grad=True)
            # Shape: (): summed over the examples, so that each example's step is its own.
            divergence = sum(
                _divergence_to_target(kind, noisy[key], clean[key]).sum()
                for key, kind in kinds.items()
            )
            if isinstance(divergence, torch.Tensor) and divergence.requires_grad:
                gradients = torch.autograd.grad(divergence, deltas, allow_unused=True)
            else:
                gradients = (None,) * len(deltas)
            deltas = [self._ascent(delta, gradient) for delta, gradient in zip(deltas, gradients)]
        adversarial, _ = self._perturbed_pass(inputs, deltas, requires_grad=False)
        return sum(  # type: ignore[return-value]
            _adversarial_divergence(kind, adversarial[key], clean[key]).mean()
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
        inputs: Dict[str, object],
        deltas: Optional[List[torch.Tensor]],
        requires_grad: bool,
    ) -> Tuple[Dict[str, torch.Tensor], List[torch.Tensor]]:
        """
        The wrapped model's outputs with `deltas` (fresh noise where `None`) added to the
        embedding layers' outputs, and the deltas used.
        """
        with self._noise.adding(deltas, self._sample_noise, requires_grad) as used:
            output = self._model(**inputs)
        self._check_unlabelled(output)
        if not used:
            raise ConfigurationError(
                f"tft_smart: {type(self._model).__name__} called no transformer embedding layer."
            )
        return output, used

    def _sample_noise(self, embedded: torch.Tensor) -> torch.Tensor:
        """`delta_0 ~ N(0, noise_std^2)` of `embedded`'s shape, in at least float32."""
        return (
            torch.randn(embedded.shape, dtype=_precise(embedded.dtype), device=embedded.device)
            * self._noise_std
        )

    def _proximal_term(
        self,
        inputs: Dict[str, object],
        current: Dict[str, torch.Tensor],
        kinds: Dict[str, str],
    ) -> torch.Tensor:
        averages = {name: getattr(self, buffer) for name, buffer in self._proximal_buffers.items()}
        with torch.no_grad(), _evaluation_mode(self._model):
            target = torch.func.functional_call(self._model, averages, args=(), kwargs=inputs)
        self._check_unlabelled(target)
        return sum(  # type: ignore[return-value]
            _divergence_to_target(kind, current[key], target[key]).mean()
            for key, kind in kinds.items()
        )

    def _check_unlabelled(self, output: Dict[str, torch.Tensor]) -> None:
        if "loss" in output:
            raise ConfigurationError(
                f"tft_smart: {type(self._model).__name__} computed a loss without the label "
                f"arguments {sorted(self._label_arguments)}: name its label arguments in "
                "`label_arguments`, so that the extra passes update no metric."
            )

    def _versions(self) -> List[int]:
        parameters = dict(self._model.named_parameters())
        # The version counter of a tensor grows with each in-place change: optimizer steps.
        return [parameters[name]._version for name in self._proximal_buffers]

    def _update_proximal_point(self) -> None:
        """`theta~ <- (1 - beta) theta + beta theta~` if an optimizer step changed `theta`."""
        versions = self._versions()
        if versions == self._parameter_versions:
            return
        parameters = dict(self._model.named_parameters())
        averages = [getattr(self, buffer) for buffer in self._proximal_buffers.values()]
        current = [parameters[name].detach() for name in self._proximal_buffers]
        with torch.no_grad():
            # The optimizers' multi-tensor kernels: one launch for all parameters.
            torch._foreach_mul_(averages, self._proximal_momentum)
            torch._foreach_add_(averages, current, alpha=1.0 - self._proximal_momentum)
        self._parameter_versions = versions

    def make_output_human_readable(
        self, output_dict: Dict[str, torch.Tensor]
    ) -> Dict[str, torch.Tensor]:
        return self._model.make_output_human_readable(output_dict)

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = dict(self._model.get_metrics(reset))
        for name, mean in self._means.items():
            value = mean.get(reset)
            if value is not None:
                metrics[name] = value
        return metrics

    def get_regularization_penalty(self) -> Optional[torch.Tensor]:
        return self._model.get_regularization_penalty()


def embedding_layers(model: torch.nn.Module) -> List[torch.nn.Module]:
    """
    The embedding layer (`transformer_model.embeddings`) of the transformer of every
    `PretrainedTransformerEmbedder` in `model`, each once; a `ConfigurationError` naming the
    model where there is none, or where a transformer has no `embeddings` module.
    """
    layers: List[torch.nn.Module] = []
    for module in model.modules():
        if not isinstance(module, PretrainedTransformerEmbedder):
            continue
        transformer = module.transformer_model
        embeddings = getattr(transformer, "embeddings", None)
        if not isinstance(embeddings, torch.nn.Module):
            raise ConfigurationError(
                f"tft_smart: the transformer {type(transformer).__name__} "
                f"({getattr(transformer.config, '_name_or_path', '?')}) has no `embeddings` "
                "module to perturb."
            )
        if all(embeddings is not layer for layer in layers):
            layers.append(embeddings)
    if not layers:
        raise ConfigurationError(
            f"tft_smart: {type(model).__name__} has no pretrained_transformer embedder whose "
            "embedding layer the adversarial term could perturb."
        )
    return layers


def symmetric_kl_divergence(logits: torch.Tensor, target_logits: torch.Tensor) -> torch.Tensor:
    """
    `KL(p || q) + KL(q || p)` of `p = softmax(logits)` and `q = softmax(target_logits)`, both of
    shape `(batch_size, num_labels)`, per example: shape `(batch_size,)`, in at least float32.
    The gradient flows through each argument that carries one.
    """
    # Shape: (batch_size, num_labels)
    log_p = torch.log_softmax(logits.to(_precise(logits.dtype)), dim=-1)
    log_q = torch.log_softmax(target_logits.to(_precise(target_logits.dtype)), dim=-1)
    return ((log_p.exp() - log_q.exp()) * (log_p - log_q)).sum(dim=-1)


def _divergence_to_target(kind: str, outputs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Per-example divergence of `outputs` from `target`, which gets no gradient."""
    if kind == CLASSIFICATION:
        return symmetric_kl_divergence(outputs, target.detach())
    outputs = outputs.to(_precise(outputs.dtype))
    return (outputs - target.detach().to(outputs.dtype)) ** 2


def _adversarial_divergence(
    kind: str, adversarial: torch.Tensor, clean: torch.Tensor
) -> torch.Tensor:
    """
    Per-example `KL(sg(q) || p) + KL(sg(p) || q)` (mt-dnn's symmetric KL criterion: each side
    against the other without gradient) for classification, `(adversarial - sg(clean))^2` for
    regression.
    """
    if kind == REGRESSION:
        return _divergence_to_target(kind, adversarial, clean)
    # Shape: (batch_size, num_labels)
    log_p = torch.log_softmax(adversarial.to(_precise(adversarial.dtype)), dim=-1)
    log_q = torch.log_softmax(clean.to(_precise(clean.dtype)), dim=-1)
    q_to_p = (log_q.detach().exp() * (log_q.detach() - log_p)).sum(dim=-1)
    p_to_q = (log_p.detach().exp() * (log_p.detach() - log_q)).sum(dim=-1)
    return q_to_p + p_to_q


def _default_kind(key: str) -> Optional[str]:
    if key == "logits" or key.endswith("_logits"):
        return CLASSIFICATION
    if key == "score" or key.endswith("_score"):
        return REGRESSION
    return None


def _has_shape(value: object, kind: str) -> bool:
    """Whether `value` is `(batch_size, num_labels)` logits or `(batch_size,)` scores."""
    if not isinstance(value, torch.Tensor) or not value.is_floating_point():
        return False
    return value.dim() == (2 if kind == CLASSIFICATION else 1)


def _precise(dtype: torch.dtype) -> torch.dtype:
    """`dtype`, or float32 where it is less precise (half precision under AMP)."""
    return torch.promote_types(dtype, torch.float32)


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


def unwrapped(model: Model) -> Model:
    """`model` itself, or the model that a `tft_smart` wrapper regularises."""
    return model.inner_model if isinstance(model, SmartRegularizedModel) else model


class _EmbeddingNoise:
    """
    The forward hook on the embedding layers: outside `adding` it changes nothing; inside, the
    i-th call of any embedding layer returns its output plus the i-th delta.
    """

    def __init__(self) -> None:
        self._active = False
        self._deltas: List[torch.Tensor] = []
        self._replay = False
        self._sample: Optional[Callable[[torch.Tensor], torch.Tensor]] = None
        self._requires_grad = False
        self._calls = 0

    @contextlib.contextmanager
    def adding(
        self,
        deltas: Optional[List[torch.Tensor]],
        sample: Callable[[torch.Tensor], torch.Tensor],
        requires_grad: bool,
    ) -> Iterator[List[torch.Tensor]]:
        """
        One pass that adds `deltas` in call order, or, where `deltas` is `None`, a fresh
        `sample(output)` at each call. Yields the list of the deltas used: leaves that require
        gradient if `requires_grad`.
        """
        self._replay = deltas is not None
        self._deltas = (
            [delta.detach().requires_grad_(requires_grad) for delta in deltas]
            if deltas is not None
            else []
        )
        self._sample = sample
        self._requires_grad = requires_grad
        self._calls = 0
        self._active = True
        try:
            yield self._deltas
        finally:
            self._active = False
        if self._replay and self._calls != len(self._deltas):
            raise RuntimeError(
                f"tft_smart: the embedding layers were called {self._calls} times in a pass, "
                f"{len(self._deltas)} times in the first."
            )

    def __call__(
        self, module: torch.nn.Module, inputs: object, output: torch.Tensor
    ) -> Optional[torch.Tensor]:
        if not self._active:
            return None
        if not isinstance(output, torch.Tensor):
            raise ConfigurationError(
                f"tft_smart: {type(module).__name__} returns {type(output).__name__}, "
                "not a tensor to perturb."
            )
        if self._replay:
            if self._calls >= len(self._deltas):
                raise RuntimeError(
                    "tft_smart: the embedding layers were called more often than in the first "
                    "perturbed pass."
                )
            delta = self._deltas[self._calls]
            if delta.shape != output.shape:
                raise RuntimeError(
                    f"tft_smart: embedding call {self._calls} has shape {tuple(output.shape)}, "
                    f"{tuple(delta.shape)} in the first perturbed pass."
                )
        else:
            assert self._sample is not None
            delta = self._sample(output).detach().requires_grad_(self._requires_grad)
            self._deltas.append(delta)
        self._calls += 1
        return output + delta.to(output.dtype)


class _RunningMean:
    """The mean of the values added since the last reset, over all distributed workers."""

    def __init__(self) -> None:
        self._total = 0.0
        self._count = 0

    def add(self, value: torch.Tensor) -> None:
        self._total += float(value.detach())
        self._count += 1

    def get(self, reset: bool) -> Optional[float]:
        """The mean as a Python float; `None` where no worker added a value."""
        total = float(dist_reduce_sum(self._total))
        count = int(dist_reduce_sum(self._count))
        if reset:
            self._total, self._count = 0.0, 0
        return total / count if count > 0 else None
