from dataclasses import dataclass
from typing import Dict, Optional

import torch
from allennlp.common import Registrable


@dataclass(frozen=True)
class SentencePairs:
    """A batch of sentence pairs, as an objective sees it."""

    embedding1: torch.Tensor
    """Shape `(batch_size, embedding_dim)`: the first sentence of each pair."""
    embedding2: torch.Tensor
    """Same shape: the second sentence of each pair."""
    label: Optional[torch.Tensor] = None
    """Shape `(batch_size,)`: class indices, or float scores for regression; None unlabelled."""


class SiameseLoss(torch.nn.Module, Registrable):
    """
    The training objective of the Siamese pair model (`tft_siamese_pair_classifier`): from the
    two sentence embeddings of each pair to the predictions, the loss and GLUE's metrics for
    the task. Register a subclass to try another objective:

        @SiameseLoss.register("my_loss")
        class MyLoss(SiameseLoss):
            def __init__(self, vocab, task, embedding_dim, label_namespace="labels"): ...
            def predict(self, pairs): ...
            def output_kinds(self): ...
            def make_output_human_readable(self, output_dict): ...
            def get_metrics(self, reset=False): ...

    The model builds its objective lazily and passes it `vocab`, `task` (the GLUE task name),
    `embedding_dim` (size of the sentence embeddings) and `label_namespace`; a subclass takes
    the ones it needs.
    """

    default_implementation = "tft_softmax"

    def forward(
        self,
        embedding1: torch.Tensor,
        embedding2: torch.Tensor,
        label: Optional[torch.Tensor] = None,
    ) -> Dict[str, torch.Tensor]:
        """
        # Parameters

        embedding1 : `torch.Tensor`
            Shape `(batch_size, embedding_dim)`: the first sentence of each pair.
        embedding2 : `torch.Tensor`
            Same shape: the second sentence of each pair.
        label : `torch.Tensor`, optional
            Shape `(batch_size,)`: class indices, or float scores for regression.

        # Returns

        `predict`'s output for the batch.
        """
        return self.predict(SentencePairs(embedding1, embedding2, label))

    def predict(self, pairs: SentencePairs) -> Dict[str, torch.Tensor]:
        """
        Batch-first predictions (`probs`, `score`, `cosine`, ... as the objective defines
        them), and `loss` when the pairs are labelled (none for an empty batch in evaluation).
        """
        raise NotImplementedError

    def output_kinds(self) -> Dict[str, str]:
        """Its predictions that are logits or scores (`tft_allennlp.common.output_kinds`)."""
        raise NotImplementedError

    def make_output_human_readable(
        self, output_dict: Dict[str, torch.Tensor]
    ) -> Dict[str, torch.Tensor]:
        """Adds `label`, the predicted label string of each pair (classification only)."""
        raise NotImplementedError

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        """GLUE's metrics for the task, with `combined_score` where it has two."""
        raise NotImplementedError
