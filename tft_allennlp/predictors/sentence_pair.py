from typing import List, Optional, Tuple

from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors.predictor import Predictor

from tft_allennlp.predictors.predictor_input import InputRecord


@Predictor.register("tft_sentence_pair")
class SentencePairPredictor(Predictor):
    """
    Scores sentence pairs (or single sentences) with a `tft_glue_classifier` archive.

    Input, one JSON object per line:

        {"sentence1": "The cat sat.", "sentence2": "A cat was sitting."}
        {"sentence": "The book was read by everyone."}

    Output: the input's fields plus `label`, `probs` and `logits` for classification tasks, or
    `score` for STS-B.

    A line that the model cannot take (not a JSON object, a sentence that is not non-empty text,
    one sentence for a pair task or two for a single-sentence one) stops prediction with a
    `MalformedInputError` naming it: `input line 3: 'sentence2' must be non-empty text, not ""`.

    Registered as a `Predictor` with name "tft_sentence_pair".
    """

    def __init__(self, model: Model, dataset_reader: DatasetReader, frozen: bool = True) -> None:
        super().__init__(model, dataset_reader, frozen)
        self._lines_loaded = 0

    def load_line(self, line: str) -> JsonDict:
        """
        The JSON object on `line`, checked as `predict_json` checks it, so that a bad line stops
        `allennlp predict` with a `MalformedInputError` naming it before anything is predicted
        for it. Lines are numbered from 1 in the order this predictor loads them: `allennlp
        predict` skips blank lines, so the number counts the JSON lines it passes.
        """
        self._lines_loaded += 1
        request = InputRecord.from_line(line, self._lines_loaded)
        self._checked(request)
        return request.record

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        return self._dataset_reader.text_to_instance(  # type: ignore
            *self._checked(InputRecord(json_dict))
        )

    def _checked(self, request: InputRecord) -> Tuple[str, Optional[str]]:
        """The sentence (`sentence1` or `sentence`) and the second one, if the task takes two."""
        if "sentence1" not in request and "sentence" not in request:
            request.reject("expected 'sentence1' and 'sentence2', or 'sentence'")
        sentence1 = request.text("sentence1" if "sentence1" in request else "sentence")
        sentence2 = request.text("sentence2") if "sentence2" in request else None
        task = self._dataset_reader._task  # type: ignore
        if task.is_pair != (sentence2 is not None):
            request.reject(
                f"task {task.name} takes two sentences: 'sentence2' is missing"
                if task.is_pair
                else f"task {task.name} takes one sentence: 'sentence2' is not expected"
            )
        return sentence1, sentence2

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        outputs = super().predict_json(inputs)
        return {**inputs, **outputs}

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        outputs = super().predict_batch_json(inputs)
        return [{**given, **output} for given, output in zip(inputs, outputs)]
