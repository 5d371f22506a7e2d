"""
A GLUE classifier of the plugin (`tft_glue_classifier`, also inside `tft_smart`) as a Hugging
Face `AutoModelForSequenceClassification`, so that it serves with plain transformers
(`export_sequence_classifier` writes an archive's as a model directory, tokenizer included).

The plugin's head is BERT's as the paper describes it: a linear layer on the final `[CLS]`
state. Hugging Face's heads put a `tanh` layer in front of it (BERT's pooler; RoBERTa's and
MPNet's classification heads) or an activation the config names (DeBERTa's `pooler_hidden_act`):

- DeBERTa(-v2): the pooler's activation is set to `linear` and its layer to the identity: the
  same function exactly.
- BERT, RoBERTa, MPNet: the `tanh` layer becomes `tanh(scale * x)` and the linear layer is
  divided by `scale`, with `scale` small enough that `tanh` is linear to 3.3e-7 (relative) on
  every value the encoder can output. The encoder's last layer norm bounds those values:
  `|x_i| <= sqrt(d - 1) * max|gamma| + max|beta|`, and `scale * bound = 1e-3`. In float32 the
  logits then equal the archive's to about 1e-6; the model is meant for inference (fine-tuning
  it further starts from that rescaled head).

Other architectures (ELECTRA's gelu head, DistilBERT's ReLU head, ModernBERT's gelu and layer
norm) are refused by name.
"""

import copy
import logging
import math
from typing import TYPE_CHECKING, Dict, Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.modules.seq2vec_encoders import ClsPooler

from tft_allennlp.archives.encoder_export import (
    adapters_paragraph,
    embedder_adapters,
    name_after_the_base,
    save_tokenizer,
)
from tft_allennlp.archives.loading import (
    archive_embedder,
    archive_tokenizer,
    check_export_paths,
    opened_archive,
)
from tft_allennlp.archives.model_card import write_model_card
from tft_allennlp.common.output_paths import output_directory
from tft_allennlp.models.glue_classifier import GlueClassifier

if TYPE_CHECKING:  # transformers' model code: imported where a model is made (start-up)
    from transformers import PreTrainedModel

logger = logging.getLogger(__name__)

TANH_POOLER = {"bert"}
"""The encoder's pooler (dense -> tanh), then dropout and `classifier`."""
TANH_HEAD = {"roberta", "xlm-roberta", "camembert", "mpnet", "data2vec-text"}
"""`classifier.dense` -> tanh -> `classifier.out_proj`, on the first token."""
CONFIGURABLE_POOLER = {"deberta", "deberta-v2"}
"""`pooler.dense` -> the activation `config.pooler_hidden_act` -> `classifier`."""
LINEAR_RANGE = 1e-3


def export_sequence_classifier(
    archive_file: str,
    output_dir: str,
    weights_file: Optional[str] = None,
    force: bool = False,
    merge_adapters: bool = False,
) -> str:
    """
    Saves the archive's GLUE classifier as a Hugging Face `AutoModelForSequenceClassification`
    (`sequence_classifier`) with its reader's tokenizer, whose `model_max_length` is the reader's
    `max_length`, so that `tokenizer(a, b, truncation=True)` cuts pairs as the reader did, and
    a `README.md` model card (`model_card`); returns `output_dir` (written as `export_encoder`
    writes it). A classifier trained with LoRA exports with `merge_adapters`, the adapters
    folded into the encoder's weights; other adapters a Hugging Face classifier cannot run.
    """
    check_export_paths(archive_file, weights_file, output_dir)
    with opened_archive(archive_file, weights_file) as archive:
        classifiers = [
            module for module in archive.model.modules() if isinstance(module, GlueClassifier)
        ]
        if len(classifiers) != 1:
            raise ConfigurationError(
                f"{archive_file}: not a GLUE classifier (tft_glue_classifier, also under "
                "tft_smart); only those export as a Hugging Face sequence classifier."
            )
        embedder = archive_embedder(archive, archive_file)
        adapters = embedder_adapters(embedder, archive_file, merge_adapters)
        if adapters is not None and not merge_adapters:
            raise ConfigurationError(
                f"{archive_file}: the model has adapters, which a Hugging Face sequence "
                "classifier would not run (LoRA's: merge them, --merge-adapters)."
            )
        tokenizer = archive_tokenizer(archive, archive_file)
        transformer = embedder.transformer_model
        if adapters is not None:  # LoRA merged; a copy, the archive's model left as it is
            transformer = adapters.unloaded(transformer, merge=True)
        name_after_the_base(transformer, embedder)
        model = sequence_classifier(classifiers[0], transformer)
        max_length = archive.dataset_reader.encoder.max_length  # type: ignore[attr-defined]
        with output_directory(output_dir, force, [archive_file, weights_file]) as target:
            model.save_pretrained(target, safe_serialization=True)
            save_tokenizer(tokenizer, target, max_length)
            base = getattr(embedder, "model_name", None)
            write_model_card(
                target,
                "sequence-classification",
                archive,
                archive_file,
                base,
                weights_file,
                output_dir,
                None if adapters is None else adapters_paragraph(adapters, merged=True),
            )
    logger.info("Wrote the classifier of %s to %s", archive_file, output_dir)
    return output_dir


def sequence_classifier(
    classifier: GlueClassifier, transformer: "PreTrainedModel"
) -> "PreTrainedModel":
    """
    The Hugging Face sequence-classification model of `classifier`, whose encoder is
    `transformer` (its trained weights), with the task's labels as `id2label` / `label2id`
    (`problem_type` "regression" and one output for STS-B).
    """
    model_type = transformer.config.model_type
    supported = sorted(TANH_POOLER | TANH_HEAD | CONFIGURABLE_POOLER)
    if model_type not in supported:
        raise ConfigurationError(
            f"No Hugging Face sequence-classification head reproduces a linear layer on the "
            f"first token for model type {model_type!r}; supported: {', '.join(supported)}."
        )
    pooler = classifier._seq2vec_encoder
    if not isinstance(pooler, ClsPooler) or pooler._cls_is_last_token:
        raise ConfigurationError(
            "Only the default head (cls_pooler: the first token's vector) exports as a Hugging "
            f"Face sequence classifier, not {type(pooler).__name__}."
        )
    output_layer = classifier._task_output._output_layer
    config = copy.deepcopy(transformer.config)
    config.num_labels = output_layer.out_features
    config.id2label, config.label2id = _labels(classifier)
    config.problem_type = (
        "regression" if classifier.task.is_regression else "single_label_classification"
    )
    if model_type in CONFIGURABLE_POOLER:
        config.pooler_hidden_act = "linear"
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_config(config).eval()
    encoder = getattr(model, model.base_model_prefix)
    missing, unexpected = encoder.load_state_dict(transformer.state_dict(), strict=False)
    # The pooler: BERT's is the head's first layer, set below; the others' classifiers have none.
    missing = [name for name in missing if not name.startswith("pooler.")]
    unexpected = [name for name in unexpected if not name.startswith("pooler.")]
    if missing or unexpected:
        raise ConfigurationError(
            f"The encoder does not fit {type(model).__name__}: missing {missing}, "
            f"unexpected {unexpected}."
        )
    hidden = output_layer.in_features
    weight, bias = output_layer.weight.detach(), output_layer.bias.detach()
    with torch.no_grad():
        if model_type in CONFIGURABLE_POOLER:
            _set(model.pooler.dense, torch.eye(hidden), torch.zeros(hidden))
            _set(model.classifier, weight, bias)
        else:
            scale = LINEAR_RANGE / _output_bound(transformer)
            linear = encoder.pooler.dense if model_type in TANH_POOLER else model.classifier.dense
            output = model.classifier if model_type in TANH_POOLER else model.classifier.out_proj
            _set(linear, scale * torch.eye(hidden), torch.zeros(hidden))
            _set(output, weight / scale, bias)
    return model


def _labels(classifier: GlueClassifier) -> tuple:
    if classifier.task.is_regression:
        return {0: "score"}, {"score": 0}
    namespace = classifier._task_output._label_namespace
    id2label: Dict[int, str] = dict(classifier.vocab.get_index_to_token_vocabulary(namespace))
    return id2label, {label: index for index, label in id2label.items()}


def _output_bound(transformer: "PreTrainedModel") -> float:
    """A bound on the absolute value of every component the encoder outputs: its last layer
    norm's output has squared norm at most d and mean zero, so each |z_i| <= sqrt(d - 1)."""
    norms = [module for module in transformer.modules() if isinstance(module, torch.nn.LayerNorm)]
    last = norms[-1]
    size = last.normalized_shape[-1]
    gamma = last.weight.detach().abs().max().item() if last.weight is not None else 1.0
    beta = last.bias.detach().abs().max().item() if last.bias is not None else 0.0
    return math.sqrt(size - 1) * gamma + beta


def _set(layer: torch.nn.Linear, weight: torch.Tensor, bias: torch.Tensor) -> None:
    layer.weight.copy_(weight)
    layer.bias.copy_(bias)
