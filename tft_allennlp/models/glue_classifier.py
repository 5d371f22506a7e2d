from typing import Any, Dict, List, Optional

import torch
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import Seq2VecEncoder, TextFieldEmbedder
from allennlp.modules.seq2vec_encoders import ClsPooler
from allennlp.nn import InitializerApplicator, util
from allennlp.training.metrics import CategoricalAccuracy, F1Measure, Metric

from tft_allennlp.common.glue_tasks import GlueTask, get_glue_task
from tft_allennlp.nn.initializers import classifier_initializer
from tft_allennlp.nn.util import mean_loss
from tft_allennlp.training.metrics import (
    MatthewsCorrelation,
    PearsonCorrelation,
    SpearmanCorrelation,
)


@Model.register("tft_glue_classifier")
class GlueClassifier(Model):
    """
    BERT's GLUE fine-tuning model: the final hidden state of `[CLS]` -> dropout -> one linear
    layer. Cross-entropy over the task's labels, or mean squared error for the regression task
    STS-B, and GLUE's own metrics for the task (see `tft_allennlp.common.glue_tasks`), with
    `combined_score` as their mean where a task has two.

    Registered as a `Model` with name "tft_glue_classifier".

    # Parameters

    vocab : `Vocabulary`
        Holds the labels in `label_namespace` (unused for regression).
    text_field_embedder : `TextFieldEmbedder`
        Embeds the reader's `tokens`, normally a `pretrained_transformer` embedder; the vector
        at position 0 (`[CLS]`) represents the example.
    task : `str`
        The GLUE task name, which fixes regression vs classification, the metrics and the
        positive class for F1.
    seq2vec_encoder : `Seq2VecEncoder`, optional (default = `cls_pooler`)
        How the sequence becomes one vector. By default the final `[CLS]` state, as in the
        paper (AllenNLP's `cls_pooler`: the first token's vector, which is `<s>` for RoBERTa);
        `{"type": "bert_pooler", "pretrained_model": ...}` adds BERT's pretrained tanh pooler,
        as Hugging Face's `BertForSequenceClassification` does (the configs'
        `tft_pretrained_transformer` embedder drops the pooler from its own copy of the model
        only, so `bert_pooler` still finds it).
    dropout : `float`, optional (default = `0.1`)
        Dropout on the `[CLS]` vector, as in BERT.
    label_namespace : `str`, optional (default = `"labels"`)
    initializer : `InitializerApplicator`, optional
        Applied after the output layer has been initialised like BERT's classifier (normal, std
        0.02; zero bias).
    """

    default_predictor = "tft_sentence_pair"

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        task: str,
        seq2vec_encoder: Optional[Seq2VecEncoder] = None,
        dropout: float = 0.1,
        label_namespace: str = "labels",
        initializer: Optional[InitializerApplicator] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        self._task: GlueTask = get_glue_task(task)
        self._text_field_embedder = text_field_embedder
        self._seq2vec_encoder = seq2vec_encoder or ClsPooler(text_field_embedder.get_output_dim())
        self._dropout = torch.nn.Dropout(dropout)
        self._label_namespace = label_namespace
        num_outputs = 1 if self._task.is_regression else vocab.get_vocab_size(label_namespace)
        self._output_layer = torch.nn.Linear(self._seq2vec_encoder.get_output_dim(), num_outputs)
        self._metrics: Dict[str, Metric] = {
            name: self._build_metric(name) for name in self._task.metrics
        }
        # Some metrics (F1) raise when read before any update; report 0.0 until then.
        self._metrics_updated = False
        classifier_initializer("_output_layer")(self)
        if initializer is not None:
            initializer(self)

    def _build_metric(self, name: str) -> Metric:
        if name == "accuracy":
            return CategoricalAccuracy()
        if name == "f1":
            positive = self.vocab.get_token_index(self._task.positive_label, self._label_namespace)
            return F1Measure(positive_label=positive)
        if name == "mcc":
            return MatthewsCorrelation()
        if name == "pearson":
            return PearsonCorrelation()
        if name == "spearman":
            return SpearmanCorrelation()
        raise ValueError(f"No metric named {name!r}.")

    def forward(  # type: ignore
        self,
        tokens: TextFieldTensors,
        label: Optional[torch.Tensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, torch.Tensor]:
        """
        # Parameters

        tokens : `TextFieldTensors`
            The cross-encoded `[CLS] a [SEP] b [SEP]` wordpieces.
        label : `torch.Tensor`, optional
            Shape `(batch_size,)`: class indices, or float scores for regression.
        metadata : `List[Dict[str, Any]]`, optional
            Raw sentences and ids from the reader; unused by the computation.

        # Returns

        An output dictionary with `logits` and `probs` of shape `(batch_size, num_labels)` for
        classification or `score` of shape `(batch_size,)` for regression, and `loss` when
        labels are given: the mean over the examples of all distributed workers
        (`tft_allennlp.nn.util.mean_loss`), and none for an empty padding batch in evaluation.
        """
        # Shape: (batch_size, num_wordpieces, embedding_dim)
        embedded = self._text_field_embedder(tokens)
        # Shape: (batch_size, encoder_output_dim)
        vector = self._seq2vec_encoder(embedded, util.get_text_field_mask(tokens))
        # Shape: (batch_size, num_outputs)
        logits = self._output_layer(self._dropout(vector))

        output: Dict[str, torch.Tensor] = {}
        if self._task.is_regression:
            # Shape: (batch_size,)
            score = logits.squeeze(-1)
            output["score"] = score
            if label is not None:
                gold = label.to(score.dtype).view(-1)
                losses = torch.nn.functional.mse_loss(score, gold, reduction="none")
                self._add_loss(output, losses, logits)
                for metric in self._metrics.values():
                    metric(score, gold)
                self._metrics_updated = True
        else:
            output["logits"] = logits
            output["probs"] = torch.nn.functional.softmax(logits, dim=-1)
            if label is not None:
                gold = label.long().view(-1)
                losses = torch.nn.functional.cross_entropy(logits, gold, reduction="none")
                self._add_loss(output, losses, logits)
                for metric in self._metrics.values():
                    metric(logits, gold)
                self._metrics_updated = True
        return output

    def _add_loss(
        self, output: Dict[str, torch.Tensor], losses: torch.Tensor, logits: torch.Tensor
    ) -> None:
        # The mean over the whole distributed batch; none for an empty batch in evaluation.
        loss = mean_loss(losses, logits, self.training)
        if loss is not None:
            output["loss"] = loss

    def make_output_human_readable(
        self, output_dict: Dict[str, torch.Tensor]
    ) -> Dict[str, torch.Tensor]:
        """
        Adds `label`, the predicted label string of each example (classification only).
        """
        if not self._task.is_regression:
            predictions = output_dict["probs"].argmax(dim=-1).tolist()
            output_dict["label"] = [  # type: ignore
                self.vocab.get_token_from_index(index, namespace=self._label_namespace)
                for index in predictions
            ]
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        # Plain floats only: numpy scalars in the training state break `--recover` under
        # torch's `weights_only` loading.
        metrics: Dict[str, float] = {}
        for name, metric in self._metrics.items():
            value = metric.get_metric(reset) if self._metrics_updated else 0.0
            if isinstance(value, dict):
                value = value[name]
            metrics[name] = float(value)
        if reset:
            self._metrics_updated = False
        if len(metrics) > 1:
            metrics["combined_score"] = sum(metrics.values()) / len(metrics)
        return metrics
