from typing import Any, Dict, List, Optional

import torch
from allennlp.common.checks import ConfigurationError


class LabelledExamples:
    """
    Counts the examples that a model's metrics have seen since their last reset, with labels
    and without, so that a metric over data without labels is an error naming the data, never
    a score of 0.0 (GLUE's accuracy over an unlabelled test split would read 0.0, and
    `allennlp evaluate` would exit 0 with it).

    - `update` in a training step (the model in training mode, gradients on) raises at once for
      a batch without labels before any labelled one since the last reset, naming the example's
      file and line (AllenNLP would stop with "does not contain a 'loss' key"). Passes without
      labels after a labelled one are a model's own (SMART's extra passes) and pass;
    - `check` raises when only unlabelled examples were seen: validation or `allennlp evaluate`
      on an unlabelled file. Prediction (`allennlp predict`, `tft-glue-submission`) asks for
      no metrics and is not affected.

    The reader's `metadata` names the example: `file` and `line_number`.

    # Parameters

    what : `str`
        What the labels are, for the messages ("labels", "phrase labels").
    """

    def __init__(self, what: str = "labels") -> None:
        self._what = what
        self.labelled = 0
        self.unlabelled = 0
        self._source: Optional[str] = None

    def update(
        self,
        labelled: bool,
        batch_size: int,
        metadata: Optional[List[Dict[str, Any]]],
        training: bool,
    ) -> None:
        if batch_size == 0:
            return
        if labelled:
            self.labelled += batch_size
            return
        self.unlabelled += batch_size
        if self._source is None:
            self._source = _source(metadata)
        if training and torch.is_grad_enabled() and not self.labelled:
            raise ConfigurationError(
                f"{self._source or 'the training data'}: no {self._what}: training needs "
                "labelled data (is this an unlabelled test split?)"
            )

    def check(self) -> None:
        """Raises if every example seen since the last reset had no labels."""
        if self.unlabelled and not self.labelled:
            source = self._source or "the evaluated data"
            raise ConfigurationError(
                f"{source}: no {self._what} ({self.unlabelled} examples without): metrics need "
                "labelled data; predict unlabelled data with `allennlp predict` (or "
                "`allennlp tft-glue-submission` for GLUE test sets)"
            )

    def reset(self) -> None:
        self.labelled = 0
        self.unlabelled = 0
        self._source = None


def _source(metadata: Optional[List[Dict[str, Any]]]) -> Optional[str]:
    """`file:line` of the first example of a batch, as far as its metadata tells."""
    if not metadata:
        return None
    first = metadata[0]
    file = first.get("file")
    if file is None:
        return None
    line = first.get("line_number")
    return f"{file}:{line}" if line is not None else str(file)
