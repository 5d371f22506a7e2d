from typing import Any, Dict, List, Optional

import torch
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import Seq2VecEncoder, TextFieldEmbedder
from allennlp.modules.seq2vec_encoders import ClsPooler
from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder
from allennlp.nn import InitializerApplicator, util

from tft_allennlp.common.sentence_tasks import SentenceTask, TaskDescription
from tft_allennlp.modules.glue_task_output import GlueTaskOutput


@Model.register("tft_glue_classifier")
class GlueClassifier(Model):
    """
    BERT's GLUE fine-tuning model, for a GLUE task or any sentence(-pair) task of your own: the
    final hidden state of `[CLS]` -> dropout -> one linear layer. Cross-entropy over the task's
    labels, or mean squared error for a regression such as STS-B, and the task's metrics
    (GLUE's own for a GLUE task), with `combined_score` as their mean where a task has several:
    the `GlueTaskOutput` module, which the other models share. Predictions name the label as
    the task's files write it.

    Registered as a `Model` with name "tft_glue_classifier".

    # Parameters

    vocab : `Vocabulary`
        Gets the task's labels in `label_namespace`, in the task's order (none for regression).
    text_field_embedder : `TextFieldEmbedder`
        Embeds the reader's `tokens`, normally a `pretrained_transformer` embedder; the vector
        at position 0 (`[CLS]`) represents the example.
    task : `Union[str, Dict[str, Any]]`
        A GLUE task name, or the description of a task of your own (the reader's `task`, see
        `tft_allennlp.common.sentence_tasks`): regression or classification, the labels, the
        metrics and the positive class for F1.
    seq2vec_encoder : `Seq2VecEncoder`, optional (default = `cls_pooler`)
        How the sequence becomes one vector. By default the final `[CLS]` state, as in the
        paper (AllenNLP's `cls_pooler`: the first token's vector, which is `<s>` for RoBERTa);
        `{"type": "bert_pooler", "pretrained_model": ...}` adds BERT's pretrained tanh pooler,
        as Hugging Face's `BertForSequenceClassification` does (the configs'
        `tft_pretrained_transformer` embedder drops the pooler from its own copy of the model
        only, so `bert_pooler` still finds it). With the `cls_pooler` and a single
        `tft_pretrained_transformer` embedder, the model asks the embedder for the first
        position's final state only (`first_token_only`), which spares most of the last
        layer's work; the result is the same.
    dropout : `float`, optional (default = `0.1`)
        Dropout on the `[CLS]` vector, as in BERT.
    label_namespace : `str`, optional (default = `"labels"`)
    initializer : `InitializerApplicator`, optional
        Applied after the output layer (`_task_output._output_layer`) has been initialised like
        BERT's classifier (normal, std 0.02; zero bias).
    """

    default_predictor = "tft_sentence_pair"

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        task: TaskDescription,
        seq2vec_encoder: Optional[Seq2VecEncoder] = None,
        dropout: float = 0.1,
        label_namespace: str = "labels",
        initializer: Optional[InitializerApplicator] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        self._text_field_embedder = text_field_embedder
        self._seq2vec_encoder = seq2vec_encoder or ClsPooler(text_field_embedder.get_output_dim())
        self._task_output = GlueTaskOutput(
            vocab, task, self._seq2vec_encoder.get_output_dim(), dropout, label_namespace
        )
        self._task: SentenceTask = self._task_output.task
        # The cls pooler reads the first position only: the embedder need not compute the
        # others' last layer (embedders that do not take the argument ignore it).
        self._first_token_only = (
            isinstance(self._seq2vec_encoder, ClsPooler)
            and not self._seq2vec_encoder._cls_is_last_token
            and isinstance(text_field_embedder, BasicTextFieldEmbedder)
            and len(text_field_embedder._token_embedders) == 1
        )
        if initializer is not None:
            initializer(self)

    @property
    def task(self) -> SentenceTask:
        """The task this model is for."""
        return self._task

    def output_kinds(self) -> Dict[str, str]:
        """`logits` or, for regression, `score` (see `tft_allennlp.common.output_kinds`)."""
        return self._task_output.output_kinds()

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
            Raw sentences, ids and source lines from the reader; unused by the computation
            (they name the data in errors).

        # Returns

        An output dictionary with `logits` and `probs` of shape `(batch_size, num_labels)` for
        classification or `score` of shape `(batch_size,)` for regression, and `loss` when
        labels are given: the mean over the examples of all distributed workers
        (`tft_allennlp.nn.util.mean_loss`), and none for an empty padding batch in evaluation.
        """
        # Shape: (batch_size, num_wordpieces, embedding_dim), or (batch_size, 1, embedding_dim)
        # when only the first position is computed.
        if self._first_token_only:
            embedded = self._text_field_embedder(tokens, first_token_only=True)
        else:
            embedded = self._text_field_embedder(tokens)
        # Shape: (batch_size, encoder_output_dim)
        vector = self._seq2vec_encoder(embedded, util.get_text_field_mask(tokens))
        return self._task_output(vector, label, metadata)

    def make_output_human_readable(
        self, output_dict: Dict[str, torch.Tensor]
    ) -> Dict[str, torch.Tensor]:
        """
        Adds `label`, the predicted label string of each example (classification only).
        """
        return self._task_output.make_output_human_readable(output_dict)

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return self._task_output.get_metrics(reset)
