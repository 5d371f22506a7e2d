from typing import Dict, Optional

import torch
from allennlp.data import Vocabulary

from tft_allennlp.common.sentence_tasks import TaskDescription
from tft_allennlp.modules.glue_task_output import GlueTaskOutput
from tft_allennlp.modules.phrase_pair_features import PhrasePairFeatures
from tft_allennlp.modules.phrase_pair_features.concat_difference_features import (
    ConcatDifferenceFeatures,
)
from tft_allennlp.modules.siamese_losses.siamese_loss import SentencePairs, SiameseLoss


@SiameseLoss.register("tft_softmax")
class SoftmaxLoss(SiameseLoss):
    """
    Sentence-BERT's classification objective (Reimers & Gurevych, 2019): the pair's features
    (by default `[u; v; |u - v|]`) -> the task's `GlueTaskOutput` (dropout, linear layer,
    cross-entropy and GLUE's metrics; mean squared error on the score for STS-B). The default
    objective of `tft_siamese_pair_classifier`; works for every GLUE pair task.

    Registered as a `SiameseLoss` with name "tft_softmax".

    # Parameters

    vocab : `Vocabulary`
        Holds the labels in `label_namespace` (unused for regression).
    task : `Union[str, Dict[str, Any]]`
        A GLUE task name or a task description (`tft_allennlp.common.sentence_tasks`).
    embedding_dim : `int`
        Size of each sentence embedding (passed by the model).
    features : `PhrasePairFeatures`, optional (default = `tft_concat_difference`)
        Combines the two embeddings into the classifier's input.
    dropout : `float`, optional (default = `0.1`)
        Dropout on the features, as on BERT's `[CLS]` vector (Sentence-BERT itself uses none).
    label_namespace : `str`, optional (default = `"labels"`)
    """

    def __init__(
        self,
        vocab: Vocabulary,
        task: TaskDescription,
        embedding_dim: int,
        features: Optional[PhrasePairFeatures] = None,
        dropout: float = 0.1,
        label_namespace: str = "labels",
    ) -> None:
        super().__init__()
        self._features = features or ConcatDifferenceFeatures()
        self._task_output = GlueTaskOutput(
            vocab, task, self._features.get_output_dim(embedding_dim), dropout, label_namespace
        )

    def predict(self, pairs: SentencePairs) -> Dict[str, torch.Tensor]:
        """
        `logits` and `probs` of shape `(batch_size, num_labels)`, or `score` of shape
        `(batch_size,)` for STS-B, and `loss` when labels are given (see `GlueTaskOutput`).
        """
        # Shape: (batch_size, features_dim)
        features = self._features(pairs.embedding1, pairs.embedding2)
        return self._task_output(features, pairs.label)

    def output_kinds(self) -> Dict[str, str]:
        return self._task_output.output_kinds()

    def make_output_human_readable(
        self, output_dict: Dict[str, torch.Tensor]
    ) -> Dict[str, torch.Tensor]:
        return self._task_output.make_output_human_readable(output_dict)

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return self._task_output.get_metrics(reset)
