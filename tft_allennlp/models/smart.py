import logging
from typing import Any, Dict, List, Optional

import torch
from allennlp.common import Lazy
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.models.model import Model

from tft_allennlp.common.output_kinds import PREDICTIONS, SHAPES, has_shape, output_kinds
from tft_allennlp.modules.output_regularizers import (
    BregmanProximalRegularizer,
    OutputRegularizer,
    SmoothnessInducingRegularizer,
)
from tft_allennlp.modules.output_regularizers.output_regularizer import (
    RegularisedBatch,
    check_non_negative,
)

logger = logging.getLogger(__name__)


@Model.register("tft_smart")
class SmartRegularizedModel(Model):
    """
    SMART (Jiang et al., 2020, "SMART: Robust and Efficient Fine-Tuning for Pre-trained Natural
    Language Models through Principled Regularized Optimization") around any model of the
    plugin: the wrapped `model` runs as it is, and in training its `loss` gets

        loss + adversarial_weight * R_adv + proximal_weight * R_prox

    `R_adv` is the smoothness-inducing adversarial regulariser (`tft_smoothness_inducing`) and
    `R_prox` Bregman proximal point optimisation (`tft_bregman_proximal`): registered
    `OutputRegularizer`s, whose docstrings give the computation. `regularizers` gives any list
    of output regularisers instead of SMART's two.

    Regularised outputs: the predictions the wrapped model declares (`output_kinds()`: logits
    of shape `(batch_size, num_labels)` for `"classification"`, scores of shape `(batch_size,)`
    for `"regression"`: `tft_glue_classifier`'s `logits` or `score`, the paraphrase injector's
    `sentence_logits`, a multitask model's `<task>_logits` and `<task>_score`), or those named
    in `outputs`. Only the keys present in a batch's output count; the divergences of several
    keys add up, each averaged over the batch's examples.

    Switching SMART on or off per task in a multitask model: `tft_glue_multitask` (AllenNLP's
    `MultiTaskModel`) prefixes each head's outputs with the head name (`sst2_logits`,
    `mrpc_logits`, `stsb_score`) and a batch holds one task, so `outputs: {"sst2_logits":
    "classification"}` regularises the SST-2 batches only and leaves the others' loss exactly
    as it was (Lai's multitask setup: SST-2 regularised, paraphrase and similarity not).

    The terms are computed in training mode only, for a batch whose output has a `loss` and at
    least one regularised output, with gradients enabled; an empty batch (the padding batches
    of `tft_streaming`) returns the wrapped model's output unchanged. The extra passes get the
    forward arguments without the labels (`label_arguments`), so that they compute no loss and
    update no metric. Each unweighted term is reported as a metric (`smart_adversarial`,
    `smart_proximal`), averaged over the batches since the last reset (present only where some
    batch computed it), besides the wrapped model's own metrics.

    To predictors and commands the wrapper is the wrapped model: its outputs, their kinds
    (`output_kinds()`) and its `default_predictor` (`Predictor.from_archive` reads the class's,
    `tft_sentence_pair`, the GLUE models' predictor; give `--predictor` for other wrapped
    models: `tft_phrase_pairs` for the injector, `multitask` for the multitask model).

    Registered as a `Model` with name "tft_smart".

    # Parameters

    vocab : `Vocabulary`
        Shared with the wrapped model.
    model : `Model`
        The model to regularise, any of the plugin's (`tft_glue_classifier`,
        `tft_siamese_pair_classifier`, `tft_glue_multitask`, `tft_paraphrase_injector`).
    adversarial_weight : `float`, optional (default = `1.0`)
        `lambda_s`, the weight of `R_adv` (0: no such term); the SMART paper used 1, 3 or 5.
    proximal_weight : `float`, optional (default = `1.0`)
        `mu`, the weight of `R_prox` (0: no such term); 1 in the SMART paper.
    noise_std : `float`, optional (default = `1e-5`)
    epsilon : `float`, optional (default = `1e-6`)
    step_size : `float`, optional (default = `1e-3`)
    ascent_steps : `int`, optional (default = `1`)
        `R_adv`'s options (see `tft_smoothness_inducing`).
    proximal_momentum : `float`, optional (default = `0.99`)
        `R_prox`'s momentum (see `tft_bregman_proximal`).
    outputs : `Dict[str, str]`, optional (default = the model's `output_kinds()` predictions)
        The regularised output keys, each `"classification"` or `"regression"`. A key named
        here whose tensor is not `(batch_size, num_labels)` logits or `(batch_size,)` scores
        raises a `ConfigurationError`. Required for a model that does not declare its outputs.
    label_arguments : `List[str]`, optional (default = `["label", "labels", "phrase_labels"]`)
        The forward arguments that carry gold labels, left out of the extra passes. An extra
        pass that still returns a `loss` raises a `ConfigurationError` asking for the missing
        name.
    regularizers : `List[OutputRegularizer]`, optional
        Registered output regularisers in place of SMART's two, each with its own `weight`;
        then none of SMART's options above may be given.
    """

    default_predictor: Optional[str] = "tft_sentence_pair"

    def __init__(
        self,
        vocab: Vocabulary,
        model: Model,
        adversarial_weight: Optional[float] = None,
        proximal_weight: Optional[float] = None,
        noise_std: Optional[float] = None,
        epsilon: Optional[float] = None,
        step_size: Optional[float] = None,
        ascent_steps: Optional[int] = None,
        proximal_momentum: Optional[float] = None,
        outputs: Optional[Dict[str, str]] = None,
        label_arguments: Optional[List[str]] = None,
        regularizers: Optional[List[Lazy[OutputRegularizer]]] = None,
    ) -> None:
        super().__init__(vocab)
        self._model = model
        self.default_predictor = model.default_predictor
        smart = dict(
            adversarial_weight=adversarial_weight,
            proximal_weight=proximal_weight,
            noise_std=noise_std,
            epsilon=epsilon,
            step_size=step_size,
            ascent_steps=ascent_steps,
            proximal_momentum=proximal_momentum,
        )
        if regularizers is None:
            self._regularizers = self._smart_regularizers(smart)
        elif any(value is not None for value in smart.values()):
            raise ConfigurationError("tft_smart: give `regularizers` or SMART's options, not both.")
        else:
            self._regularizers = [lazy.construct(model=model, host=self) for lazy in regularizers]
        metrics = [regularizer.metric for regularizer in self._regularizers]
        if len(set(metrics)) < len(metrics):
            raise ConfigurationError(f"tft_smart: two regularizers report one metric: {metrics}.")
        self._kinds = _regularised_kinds(model, outputs)
        self._label_arguments = set(
            label_arguments if label_arguments is not None else ["label", "labels", "phrase_labels"]
        )

    def _smart_regularizers(self, options: Dict[str, Any]) -> List[OutputRegularizer]:
        """SMART's two terms with the options given (`None`: a term's default), each left out
        where its weight is 0."""
        given = {name: value for name, value in options.items() if value is not None}
        check_non_negative(**{k: v for k, v in given.items() if k != "proximal_momentum"})
        adversarial_weight = given.pop("adversarial_weight", 1.0)
        proximal_weight = given.pop("proximal_weight", 1.0)
        momentum = (
            {"momentum": given.pop("proximal_momentum")} if "proximal_momentum" in given else {}
        )
        BregmanProximalRegularizer.check_momentum(momentum.get("momentum", 0.0))
        regularizers: List[OutputRegularizer] = []
        if adversarial_weight > 0:
            regularizers.append(
                SmoothnessInducingRegularizer(self._model, adversarial_weight, **given)
            )
        if proximal_weight > 0:
            regularizers.append(
                BregmanProximalRegularizer(self._model, self, proximal_weight, **momentum)
            )
        return regularizers

    @property
    def inner_model(self) -> Model:
        """The wrapped model."""
        return self._model

    @property
    def regularizers(self) -> List[OutputRegularizer]:
        return list(self._regularizers)

    def output_kinds(self) -> Dict[str, str]:
        """The wrapped model's (see `tft_allennlp.common.output_kinds`)."""
        return output_kinds(self._model) or {}

    def forward(self, **inputs) -> Dict[str, torch.Tensor]:  # type: ignore
        """
        # Parameters

        **inputs
            The wrapped model's forward arguments, passed on unchanged.

        # Returns

        The wrapped model's output dictionary; in training, its `loss` plus the weighted terms.
        """
        if self.training:
            for regularizer in self._regularizers:
                regularizer.start_pass()
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
        batch = RegularisedBatch(unlabelled, output, kinds)
        for regularizer in self._regularizers:
            output["loss"] = output["loss"] + regularizer.weighted_term(batch)
        return output

    def _regularised_outputs(self, output: Dict[str, Any]) -> Dict[str, str]:
        """The batch's regularised output keys and their kinds."""
        kinds = {key: kind for key, kind in self._kinds.items() if key in output}
        for key, kind in kinds.items():
            if not has_shape(output[key], kind):
                shape = tuple(getattr(output[key], "shape", ()))
                expected = SHAPES[kind]
                raise ConfigurationError(
                    f"tft_smart: output {key!r} of shape {shape} is not {expected}, which a "
                    f"{kind} output must be."
                )
        return kinds

    def make_output_human_readable(
        self, output_dict: Dict[str, torch.Tensor]
    ) -> Dict[str, torch.Tensor]:
        return self._model.make_output_human_readable(output_dict)

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = dict(self._model.get_metrics(reset))
        for regularizer in self._regularizers:
            value = regularizer.get_metric(reset)
            if value is not None:
                metrics[regularizer.metric] = value
        return metrics

    def get_regularization_penalty(self) -> Optional[torch.Tensor]:
        return self._model.get_regularization_penalty()


def _regularised_kinds(model: Model, outputs: Optional[Dict[str, str]]) -> Dict[str, str]:
    """
    `outputs`, checked, or else the predictions `model` declares; a `ConfigurationError` where
    it declares none.
    """
    for key, kind in (outputs or {}).items():
        if kind not in PREDICTIONS:
            raise ConfigurationError(
                f"tft_smart: outputs[{key!r}] must be one of {list(PREDICTIONS)}, not {kind!r}."
            )
    if outputs is not None:
        return dict(outputs)
    declared = output_kinds(model)
    if declared is None:
        raise ConfigurationError(
            f"tft_smart: {type(model).__name__} does not declare its outputs (`output_kinds()`): "
            "name the regularised ones in `outputs`."
        )
    kinds = {key: kind for key, kind in declared.items() if kind in PREDICTIONS}
    if not kinds:
        logger.warning(
            "tft_smart: %s has no classification or regression output to regularise (it "
            "declares %s): name them in `outputs`.",
            type(model).__name__,
            declared,
        )
    return kinds
