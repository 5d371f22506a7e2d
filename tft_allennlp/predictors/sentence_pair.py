from typing import List

from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor


@Predictor.register("tft_sentence_pair")
class SentencePairPredictor(Predictor):
    """
    Scores sentence pairs (or single sentences) with a `tft_glue_classifier` archive.

    Input, one JSON object per line:

        {"sentence1": "The cat sat.", "sentence2": "A cat was sitting."}
        {"sentence": "The book was read by everyone."}

    Output: the input's fields plus `label`, `probs` and `logits` for classification tasks, or
    `score` for STS-B.

    Registered as a `Predictor` with name "tft_sentence_pair".
    """

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        sentence1 = json_dict.get("sentence1", json_dict.get("sentence"))
        if sentence1 is None:
            raise ValueError(f"Expected 'sentence1' and 'sentence2', or 'sentence', in {json_dict}")
        return self._dataset_reader.text_to_instance(  # type: ignore
            sentence1, json_dict.get("sentence2")
        )

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return {**inputs, **super().predict_json(inputs)}

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        outputs = super().predict_batch_json(inputs)
        return [{**given, **output} for given, output in zip(inputs, outputs)]
