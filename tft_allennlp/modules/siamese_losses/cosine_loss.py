from dataclasses import dataclass
from typing import Dict

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary

from tft_allennlp.common.glue_tasks import resolve_task
from tft_allennlp.common.output_kinds import REGRESSION
from tft_allennlp.common.sentence_tasks import SentenceTask, TaskDescription, add_task_labels
from tft_allennlp.metrics import GlueMetrics
from tft_allennlp.modules.siamese_losses.siamese_loss import SentencePairs, SiameseLoss
from tft_allennlp.nn.util import mean_loss


@dataclass(frozen=True)
class ScoredPairs:
    """A batch of pairs, as the loss of a cosine objective sees it."""

    embedding1: torch.Tensor
    """Shape `(batch_size, embedding_dim)`: the first sentence of each pair."""
    embedding2: torch.Tensor
    """Same shape: the second sentence of each pair."""
    cosine: torch.Tensor
    """Shape `(batch_size,)`: the cosine similarity of each pair's embeddings."""
    label: torch.Tensor
    """Shape `(batch_size,)`: class indices, or float scores for regression."""


class CosineLoss(SiameseLoss):
    """
    The shared part of the objectives that score a pair by the cosine similarity of its two
    embeddings, with no classifier: the predictions, GLUE's metrics and the loss reduction.
    A subclass only defines the loss of a batch (`_losses`), and takes the parameters below
    besides its own.

    Predictions: `cosine`, shape `(batch_size,)`, for every task; for STS-B also `score`, the
    cosine scaled to GLUE's range (`5 * cosine`), on which Pearson and Spearman correlation are
    computed; for a paraphrase task (MRPC, QQP: the tasks with a positive class), the positive
    class when `cosine >= threshold` and the other class otherwise, which accuracy and F1 read
    and `make_output_human_readable` returns as `label`. Other GLUE tasks (several or unranked
    classes) are rejected with a `ConfigurationError`.

    # Parameters

    vocab : `Vocabulary`
        Holds the two labels in `label_namespace` (unused for regression).
    task : `Union[str, Dict[str, Any]]`
        A GLUE task name or a task description (`tft_allennlp.common.sentence_tasks`).
    threshold : `float`, optional (default = `0.5`)
        Cosine similarity from which a pair is predicted positive (classification only).
    label_namespace : `str`, optional (default = `"labels"`)
    """

    supports_regression = False
    """Whether the objective can learn STS-B's scores; else only the positive class is known."""

    def __init__(
        self,
        vocab: Vocabulary,
        task: TaskDescription,
        threshold: float = 0.5,
        label_namespace: str = "labels",
    ) -> None:
        super().__init__()
        self.task: SentenceTask = resolve_task(task)
        add_task_labels(vocab, self.task, label_namespace)
        name = type(self).__name__
        if self.task.is_regression:
            if not self.supports_regression:
                raise ConfigurationError(
                    f"{name} needs a task with a positive class, not the regression "
                    f"{self.task.name}."
                )
        else:
            if self.task.positive_label is None:
                raise ConfigurationError(
                    f"{name} needs stsb or a paraphrase task with a positive class (mrpc, qqp), "
                    f"not {self.task.name}."
                )
            if vocab.get_vocab_size(label_namespace) != 2:
                raise ConfigurationError(f"{name} needs two labels in {label_namespace!r}.")
            self._positive = vocab.get_token_index(self.task.positive_label, label_namespace)
        # Scores are predicted as the cosine times the top of the task's range (STS-B: 5).
        self._score_scale = self.task.score_range[1] if self.task.score_range is not None else 1.0
        self.vocab = vocab
        self._threshold = threshold
        self._label_namespace = label_namespace
        self._metrics = GlueMetrics(vocab, self.task, label_namespace)

    def predict(self, pairs: SentencePairs) -> Dict[str, torch.Tensor]:
        embedding1, embedding2, label = pairs.embedding1, pairs.embedding2, pairs.label
        # Shape: (batch_size,)
        cosine = torch.nn.functional.cosine_similarity(embedding1, embedding2, dim=-1)
        output = {"cosine": cosine}
        if self.task.is_regression:
            # Shape: (batch_size,)
            output["score"] = self._score_scale * cosine
        if label is not None:
            losses = self._losses(ScoredPairs(embedding1, embedding2, cosine, label))
            loss = mean_loss(losses, cosine, self.training)
            if loss is not None:
                output["loss"] = loss
            if self.task.is_regression:
                self._metrics(output["score"].detach(), label.view(-1).to(cosine.dtype))
            else:
                # Shape: (batch_size, 2): one-hot, as class scores for accuracy and F1.
                predicted = torch.nn.functional.one_hot(self._predicted(cosine.detach()), 2)
                self._metrics(predicted, label.view(-1).long())
        return output

    def _predicted(self, cosine: torch.Tensor) -> torch.Tensor:
        """The predicted label index of each pair, shape `(batch_size,)`."""
        return torch.where(cosine >= self._threshold, self._positive, 1 - self._positive)

    def _losses(self, pairs: ScoredPairs) -> torch.Tensor:
        """
        The loss of each unit the objective averages over (pair, anchor, ...), shape
        `(num_units,)`.
        """
        raise NotImplementedError

    def _target(self, label: torch.Tensor) -> torch.Tensor:
        """
        The cosine each pair should have in [0, 1]: the gold score over its maximum (5 for
        STS-B), or 1 for the positive class and 0 for the other. Shape `(batch_size,)`.
        """
        label = label.view(-1)
        if self.task.is_regression:
            return label.float() / self._score_scale
        return (label == self._positive).float()

    def output_kinds(self) -> Dict[str, str]:
        """STS-B's `score`; a classification task's `cosine` is no logits."""
        return {"score": REGRESSION} if self.task.is_regression else {}

    def make_output_human_readable(
        self, output_dict: Dict[str, torch.Tensor]
    ) -> Dict[str, torch.Tensor]:
        if not self.task.is_regression:
            output_dict["label"] = [  # type: ignore
                self.vocab.get_token_from_index(index, namespace=self._label_namespace)
                for index in self._predicted(output_dict["cosine"]).tolist()
            ]
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return self._metrics.get_metrics(reset)
