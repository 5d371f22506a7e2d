from typing import Any, Dict, List, Optional

import torch
from allennlp.data import Vocabulary

from tft_allennlp.common.glue_tasks import resolve_task
from tft_allennlp.common.output_kinds import CLASSIFICATION, REGRESSION
from tft_allennlp.common.sentence_tasks import SentenceTask, TaskDescription, add_task_labels
from tft_allennlp.metrics import GlueMetrics
from tft_allennlp.metrics.labelled_examples import LabelledExamples
from tft_allennlp.nn.initializers import classifier_initializer
from tft_allennlp.nn.util import mean_loss


class GlueTaskOutput(torch.nn.Module):
    """
    What BERT puts on top of an example's vector for one task (a GLUE task or one of the
    user's, `tft_allennlp.common.sentence_tasks`): dropout, one linear layer initialised like
    BERT's classifier (normal, std 0.02; zero bias), cross-entropy over the task's labels or
    mean squared error for a regression such as STS-B, and the task's metrics, with
    `combined_score` as their mean where a task has several. The task's labels are put into
    the vocabulary in the task's order. Metrics over examples without labels are an error
    naming the data, and so is a training batch without labels (`LabelledExamples`). The one
    implementation of a task's output, shared by the cross-encoder (`tft_glue_classifier`) and
    the models that build the example's vector otherwise.

    A regression with a `score_range` starts at the middle of it (bias 2.5 for STS-B's 0-5)
    rather than at 0. From 0, the first updates mostly move the output to where the scores
    lie, and while they do, batches grouped by length (whose mean scores differ more than
    random batches': STS-B's captions are shorter and score lower than its news) pull it
    apart; centred, STS-B trains bucketed at random batches' Pearson or better
    (benchmarks/RESULTS.md, "STS-B and length bucketing"). A model's `initializer` still
    applies after this.

    # Parameters

    vocab : `Vocabulary`
        Gets the task's labels in `label_namespace` (unused for regression).
    task : `Union[str, Dict[str, Any]]`
        A GLUE task name or a task description: regression or classification, labels,
        metrics, positive class for F1.
    input_dim : `int`
        Size of the example vectors.
    dropout : `float`, optional (default = `0.1`)
    label_namespace : `str`, optional (default = `"labels"`)
    """

    def __init__(
        self,
        vocab: Vocabulary,
        task: TaskDescription,
        input_dim: int,
        dropout: float = 0.1,
        label_namespace: str = "labels",
    ) -> None:
        super().__init__()
        self.vocab = vocab
        self.task: SentenceTask = resolve_task(task)
        add_task_labels(vocab, self.task, label_namespace)
        self._label_namespace = label_namespace
        self._dropout = torch.nn.Dropout(dropout)
        num_outputs = 1 if self.task.is_regression else vocab.get_vocab_size(label_namespace)
        self._output_layer = torch.nn.Linear(input_dim, num_outputs)
        classifier_initializer("_output_layer")(self)
        if self.task.is_regression and self.task.score_range is not None:
            low, high = self.task.score_range
            torch.nn.init.constant_(self._output_layer.bias, (low + high) / 2)
        self._metrics = GlueMetrics(vocab, self.task, label_namespace)
        self._labelled = LabelledExamples()

    def output_kinds(self) -> Dict[str, str]:
        """Its prediction: `score` (regression) or `logits` (classification)."""
        return {"score": REGRESSION} if self.task.is_regression else {"logits": CLASSIFICATION}

    def forward(
        self,
        vector: torch.Tensor,
        label: Optional[torch.Tensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, torch.Tensor]:
        """
        # Parameters

        vector : `torch.Tensor`
            Shape `(batch_size, input_dim)`: one vector per example.
        label : `torch.Tensor`, optional
            Shape `(batch_size,)`: class indices, or float scores for regression.
        metadata : `List[Dict[str, Any]]`, optional
            The reader's, naming each example's `file` and `line_number` in errors.

        # Returns

        `logits` and `probs` of shape `(batch_size, num_labels)` for classification or `score`
        of shape `(batch_size,)` for regression, and `loss` when labels are given: the mean
        over the examples of all distributed workers (`tft_allennlp.nn.util.mean_loss`), and
        none for an empty padding batch in evaluation.
        """
        self._labelled.update(label is not None, vector.size(0), metadata, self.training)
        # Shape: (batch_size, num_outputs)
        logits = self._output_layer(self._dropout(vector))
        output: Dict[str, torch.Tensor] = {}
        if self.task.is_regression:
            # Shape: (batch_size,)
            score = logits.squeeze(-1)
            output["score"] = score
            if label is not None:
                gold = label.to(score.dtype).view(-1)
                losses = torch.nn.functional.mse_loss(score, gold, reduction="none")
                self._add_loss(output, losses, logits)
                self._metrics(score, gold)
        else:
            output["logits"] = logits
            output["probs"] = torch.nn.functional.softmax(logits, dim=-1)
            if label is not None:
                gold = label.long().view(-1)
                losses = torch.nn.functional.cross_entropy(logits, gold, reduction="none")
                self._add_loss(output, losses, logits)
                self._metrics(logits, gold)
        return output

    def _add_loss(
        self, output: Dict[str, torch.Tensor], losses: torch.Tensor, logits: torch.Tensor
    ) -> None:
        loss = mean_loss(losses, logits, self.training)
        if loss is not None:
            output["loss"] = loss

    def make_output_human_readable(
        self, output_dict: Dict[str, torch.Tensor]
    ) -> Dict[str, torch.Tensor]:
        """Adds `label`, the predicted label string of each example (classification only)."""
        if not self.task.is_regression:
            predictions = output_dict["probs"].argmax(dim=-1).tolist()
            output_dict["label"] = [  # type: ignore
                self.vocab.get_token_from_index(index, namespace=self._label_namespace)
                for index in predictions
            ]
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        self._labelled.check()
        if reset:
            self._labelled.reset()
        return self._metrics.get_metrics(reset)
