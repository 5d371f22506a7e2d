from typing import Any, Dict, List, Optional

import torch
from allennlp.common.checks import ConfigurationError, check_dimensions_match
from allennlp.data import Vocabulary
from allennlp.models.heads import Head
from allennlp.modules import Seq2VecEncoder
from allennlp.modules.seq2vec_encoders import ClsPooler
from transformers import AutoConfig

from tft_allennlp.common.sentence_tasks import SentenceTask, TaskDescription
from tft_allennlp.common.transformer_source import transformer_source
from tft_allennlp.modules.glue_task_output import GlueTaskOutput


@Head.register("tft_glue_head")
class GlueHead(Head):
    """
    One GLUE task on top of a shared encoder (a `MultiTaskModel` backbone such as
    `pretrained_transformer`): a seq2vec pooler (the `[CLS]` vector by default) followed by
    `GlueTaskOutput` (dropout, linear layer, the task's loss and GLUE metrics), so a task
    trained in a multitask model is scored exactly as by `tft_glue_classifier`.

    `allennlp predict` on a multitask archive takes lines such as
    `{"task": "mrpc", "sentence1": ..., "sentence2": ...}`: AllenNLP's `multitask` predictor
    hands each to the `tft_sentence_pair` predictor of the head it names.

    Registered as a `Head` with name "tft_glue_head".

    # Parameters

    vocab : `Vocabulary`
        Holds the labels in `label_namespace` (unused for regression).
    task : `Union[str, Dict[str, Any]]`
        A GLUE task name or a task description (`tft_allennlp.common.sentence_tasks`):
        regression or classification, labels, metrics, positive class for F1.
    embedding_dim : `int`, optional
        Size of the backbone's token vectors. Give it or `model_name`, unless
        `seq2vec_encoder` is given.
    model_name : `str`, optional
        The backbone's Hugging Face model (name, directory or model archive of the plugin),
        whose `hidden_size` is then the embedding size; its configuration is read (from the
        archive's copy when loading an archive), not its weights.
    seq2vec_encoder : `Seq2VecEncoder`, optional (default = `cls_pooler`)
        How the sequence becomes one vector.
    dropout : `float`, optional (default = `0.1`)
    label_namespace : `str`, optional (default = `"labels"`)
    serialization_dir : `str`, optional
        Given by AllenNLP: the training run's directory, or the extracted archive being loaded.
    """

    default_predictor = "tft_sentence_pair"

    def __init__(
        self,
        vocab: Vocabulary,
        task: TaskDescription,
        embedding_dim: Optional[int] = None,
        model_name: Optional[str] = None,
        seq2vec_encoder: Optional[Seq2VecEncoder] = None,
        dropout: float = 0.1,
        label_namespace: str = "labels",
        serialization_dir: Optional[str] = None,
    ) -> None:
        super().__init__(vocab)
        if embedding_dim is None and model_name is not None:
            source = transformer_source(model_name, serialization_dir)
            embedding_dim = AutoConfig.from_pretrained(source).hidden_size
        if seq2vec_encoder is None:
            if embedding_dim is None:
                raise ConfigurationError(
                    "tft_glue_head needs embedding_dim or model_name for its cls_pooler."
                )
            seq2vec_encoder = ClsPooler(embedding_dim)
        elif embedding_dim is not None:
            check_dimensions_match(
                embedding_dim,
                seq2vec_encoder.get_input_dim(),
                "embedding dim",
                "seq2vec encoder input dim",
            )
        self._seq2vec_encoder = seq2vec_encoder
        self._task_output = GlueTaskOutput(
            vocab, task, seq2vec_encoder.get_output_dim(), dropout, label_namespace
        )
        self.task: SentenceTask = self._task_output.task

    def output_kinds(self) -> Dict[str, str]:
        """`logits` or, for regression, `score` (see `tft_allennlp.common.output_kinds`)."""
        return self._task_output.output_kinds()

    def forward(  # type: ignore
        self,
        encoded_text: torch.Tensor,
        encoded_text_mask: torch.BoolTensor,
        label: Optional[torch.Tensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, torch.Tensor]:
        """
        # Parameters

        encoded_text : `torch.Tensor`
            Shape `(batch_size, num_wordpieces, embedding_dim)`: the backbone's output.
        encoded_text_mask : `torch.BoolTensor`
            Shape `(batch_size, num_wordpieces)`.
        label : `torch.Tensor`, optional
            Shape `(batch_size,)`: class indices, or float scores for regression.
        metadata : `List[Dict[str, Any]]`, optional
            The reader's, naming the data in errors.

        # Returns

        `GlueTaskOutput`'s dictionary: `logits` and `probs` or `score`, and `loss` when labels
        are given.
        """
        # Shape: (batch_size, encoder_output_dim)
        vector = self._seq2vec_encoder(encoded_text, encoded_text_mask)
        return self._task_output(vector, label, metadata)

    def make_output_human_readable(
        self, output_dict: Dict[str, torch.Tensor]
    ) -> Dict[str, torch.Tensor]:
        """
        Adds `label`, the predicted label strings (classification only). Does nothing when
        this head made no prediction in the batch (`MultiTaskModel` calls every head).
        """
        if self.task.is_regression or "probs" not in output_dict:
            return output_dict
        return self._task_output.make_output_human_readable(output_dict)

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return self._task_output.get_metrics(reset)

    @staticmethod
    def main_score(metrics: Dict[str, float]) -> float:
        """
        The task's GLUE score from its `get_metrics()`: `combined_score` (the mean) for the
        tasks with two metrics, the one metric otherwise.
        """
        if "combined_score" in metrics:
            return metrics["combined_score"]
        (score,) = metrics.values()
        return score
