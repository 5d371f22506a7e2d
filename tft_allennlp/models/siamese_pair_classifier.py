from typing import Any, Dict, List, Optional

import torch
from allennlp.common import Lazy
from allennlp.common.checks import ConfigurationError, check_dimensions_match
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import Seq2VecEncoder, TextFieldEmbedder
from allennlp.modules.seq2vec_encoders import BagOfEmbeddingsEncoder
from allennlp.nn import InitializerApplicator, util

from tft_allennlp.common.glue_tasks import resolve_task
from tft_allennlp.common.output_kinds import EMBEDDING
from tft_allennlp.common.sentence_tasks import SentenceTask, TaskDescription
from tft_allennlp.metrics.labelled_examples import LabelledExamples
from tft_allennlp.modules.siamese_losses import SiameseLoss, SoftmaxLoss


@Model.register("tft_siamese_pair_classifier")
class SiamesePairClassifier(Model):
    """
    A Siamese (bi-encoder) model of a GLUE sentence pair, as Sentence-BERT (Reimers & Gurevych,
    2019): each sentence is encoded on its own by the same embedder and pooled into one vector,
    `u` and `v`, and a registrable objective (`SiameseLoss`) turns the two vectors into the
    predictions, the loss and GLUE's metrics for the task: `tft_softmax` (features, by default
    `[u; v; |u - v|]`, -> linear -> cross-entropy; the default), `tft_cosine_mse`,
    `tft_cosine_embedding` or `tft_multiple_negatives_ranking` (cosine similarity, no
    classifier). Reads the `tokens1` and `tokens2` fields of the `tft_glue` reader with
    `pair_encoding: "separate"`.

    Besides the objective's outputs, `forward` returns the two sentence embeddings,
    `embedding1` and `embedding2`; the `tft_sentence_pair` predictor passes them on on request.

    Registered as a `Model` with name "tft_siamese_pair_classifier".

    # Parameters

    vocab : `Vocabulary`
        Holds the labels in `label_namespace` (unused for regression).
    text_field_embedder : `TextFieldEmbedder`
        Embeds each sentence's wordpieces, normally a `pretrained_transformer` embedder (any
        Hugging Face checkpoint, such as one written by `allennlp tft-export`); shared by the
        two sentences.
    task : `str`
        The GLUE task name; a pair task (not CoLA or SST-2).
    seq2vec_encoder : `Seq2VecEncoder`, optional (default = `boe` with `averaged: true`)
        Pools a sentence's wordpiece vectors into its embedding; by default their mean over the
        wordpieces that are not padding (special tokens included), Sentence-BERT's default.
    objective : `SiameseLoss`, optional (default = `tft_softmax`)
        Built by the model, which passes it `vocab`, `task`, `embedding_dim` (the pooled size)
        and `label_namespace`; the config gives its own options only.
    label_namespace : `str`, optional (default = `"labels"`)
    initializer : `InitializerApplicator`, optional
        Applied after the objective has been built.
    """

    default_predictor = "tft_sentence_pair"

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        task: TaskDescription,
        seq2vec_encoder: Optional[Seq2VecEncoder] = None,
        objective: Optional[Lazy[SiameseLoss]] = None,
        label_namespace: str = "labels",
        initializer: Optional[InitializerApplicator] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        self._task: SentenceTask = resolve_task(task)
        if not self._task.is_pair:
            raise ConfigurationError(
                f"A Siamese model needs a sentence-pair task, not {self._task.name}."
            )
        self._text_field_embedder = text_field_embedder
        embedding_dim = text_field_embedder.get_output_dim()
        self._seq2vec_encoder = seq2vec_encoder or BagOfEmbeddingsEncoder(
            embedding_dim, averaged=True
        )
        check_dimensions_match(
            embedding_dim,
            self._seq2vec_encoder.get_input_dim(),
            "text field embedder output dim",
            "seq2vec encoder input dim",
        )
        self._objective = (objective or Lazy(SoftmaxLoss)).construct(
            vocab=vocab,
            task=task,
            embedding_dim=self._seq2vec_encoder.get_output_dim(),
            label_namespace=label_namespace,
        )
        # Metrics over unlabelled pairs are an error naming the data, whatever the objective.
        self._labelled = LabelledExamples()
        if initializer is not None:
            initializer(self)

    @property
    def task(self) -> SentenceTask:
        """The GLUE task this model is for."""
        return self._task

    def output_kinds(self) -> Dict[str, str]:
        """
        The objective's predictions, and the sentence embeddings `embedding1` and `embedding2`
        (see `tft_allennlp.common.output_kinds`).
        """
        return {**self._objective.output_kinds(), "embedding1": EMBEDDING, "embedding2": EMBEDDING}

    def forward(  # type: ignore
        self,
        tokens1: TextFieldTensors,
        tokens2: TextFieldTensors,
        label: Optional[torch.Tensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, torch.Tensor]:
        """
        # Parameters

        tokens1 : `TextFieldTensors`
            The first sentence's wordpieces, `[CLS] a [SEP]` in the tokenizer's layout.
        tokens2 : `TextFieldTensors`
            The second sentence's, `[CLS] b [SEP]`.
        label : `torch.Tensor`, optional
            Shape `(batch_size,)`: class indices, or float scores for regression.
        metadata : `List[Dict[str, Any]]`, optional
            Raw sentences and ids from the reader; unused by the computation.

        # Returns

        An output dictionary with `embedding1` and `embedding2`, shape
        `(batch_size, embedding_dim)`, the objective's predictions (see its class), and `loss`
        when labels are given.
        """
        # Shape: (batch_size, embedding_dim)
        embedding1 = self.embed(tokens1)
        embedding2 = self.embed(tokens2)
        self._labelled.update(label is not None, embedding1.size(0), metadata, self.training)
        output = self._objective(embedding1, embedding2, label)
        output["embedding1"] = embedding1
        output["embedding2"] = embedding2
        return output

    def embed(self, tokens: TextFieldTensors) -> torch.Tensor:
        """
        The pooled embedding of each sentence in `tokens`, shape `(batch_size, embedding_dim)`.
        """
        # Shape: (batch_size, num_wordpieces, hidden_dim)
        embedded = self._text_field_embedder(tokens)
        # Shape: (batch_size, embedding_dim)
        return self._seq2vec_encoder(embedded, util.get_text_field_mask(tokens))

    def make_output_human_readable(
        self, output_dict: Dict[str, torch.Tensor]
    ) -> Dict[str, torch.Tensor]:
        """
        Adds `label`, the predicted label string of each pair (classification only).
        """
        return self._objective.make_output_human_readable(output_dict)

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        self._labelled.check()
        if reset:
            self._labelled.reset()
        return self._objective.get_metrics(reset)
