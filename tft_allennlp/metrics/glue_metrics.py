from typing import Dict

import torch
from allennlp.data import Vocabulary
from allennlp.training.metrics import CategoricalAccuracy, F1Measure, Metric

from tft_allennlp.common.sentence_tasks import SentenceTask
from tft_allennlp.metrics.matthews_correlation import MatthewsCorrelation
from tft_allennlp.metrics.pearson_correlation import PearsonCorrelation
from tft_allennlp.metrics.spearman_correlation import SpearmanCorrelation


class GlueMetrics:
    """
    The metrics of one task (`SentenceTask.metrics`: GLUE's for a GLUE task), with
    `combined_score` as their mean where the task has several: the one place they are built and
    read, for `GlueTaskOutput` and for the objectives without a linear layer (the Siamese
    model's cosine objectives). Predictions are class scores of shape `(batch_size, num_labels)`
    or regression scores of shape `(batch_size,)`.

    # Parameters

    vocab : `Vocabulary`
        Holds the labels in `label_namespace`, for the positive class of F1.
    task : `SentenceTask`
    label_namespace : `str`, optional (default = `"labels"`)
    """

    def __init__(
        self, vocab: Vocabulary, task: SentenceTask, label_namespace: str = "labels"
    ) -> None:
        self._vocab = vocab
        self._task = task
        self._label_namespace = label_namespace
        self._metrics: Dict[str, Metric] = {name: self._metric(name) for name in task.metrics}
        # Some metrics (F1) raise when read before any update; report 0.0 until then.
        self._updated = False

    def _metric(self, name: str) -> Metric:
        if name == "accuracy":
            return CategoricalAccuracy()
        if name == "f1":
            assert self._task.positive_label is not None  # the tasks scored by F1 have one
            positive = self._vocab.get_token_index(self._task.positive_label, self._label_namespace)
            return F1Measure(positive_label=positive)
        if name == "mcc":
            return MatthewsCorrelation()
        if name == "pearson":
            return PearsonCorrelation()
        if name == "spearman":
            return SpearmanCorrelation()
        raise ValueError(f"No metric named {name!r}.")

    def __call__(self, predictions: torch.Tensor, gold: torch.Tensor) -> None:
        for metric in self._metrics.values():
            metric(predictions, gold, None)
        self._updated = True

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        # Plain floats only: numpy scalars in the training state break `--recover` under
        # torch's `weights_only` loading.
        metrics: Dict[str, float] = {}
        for name, metric in self._metrics.items():
            value = metric.get_metric(reset) if self._updated else 0.0
            if isinstance(value, dict):
                value = value[name]
            metrics[name] = float(value)
        if reset:
            self._updated = False
        if len(metrics) > 1:
            metrics["combined_score"] = sum(metrics.values()) / len(metrics)
        return metrics
