from typing import List, Optional, Tuple

from allennlp.common.checks import ConfigurationError
from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors.predictor import Predictor

from tft_allennlp.common.input_problems import shown
from tft_allennlp.common.output_kinds import EMBEDDING, output_kinds
from tft_allennlp.common.sentence_tasks import SentenceTask
from tft_allennlp.predictors.predictor_input import InputRecord, LineCheckingPredictor

EMBEDDINGS = ("embedding1", "embedding2")
"""The sentence embeddings of a Siamese model's output, returned on request only."""

Keys = Tuple[str, Optional[str]]
"""The keys of a line's first sentence and of its second one (or of a refused second one)."""

GENERIC_KEYS: Tuple[Keys, ...] = (("sentence1", "sentence2"), ("sentence", "sentence2"))
"""The names any task's lines may use, whatever its own columns are called."""


def own_keys(task: SentenceTask) -> Optional[Keys]:
    """
    The task's own text columns as keys of a line (`text_a`, `text_b`), when it names them
    (not by position) otherwise than the generic names; `None` otherwise.
    """
    keys = (task.sentence1, task.sentence2)
    if not all(isinstance(key, str) for key in keys if key is not None):
        return None
    if keys[0] in ("sentence1", "sentence") and keys[1] in (None, "sentence2"):
        return None
    return keys  # type: ignore[return-value]


def sentence_keys(task: SentenceTask) -> List[Keys]:
    """
    The keys a line of `task` may give its sentences under, in the order they are tried (the
    first whose first key the line has is used): the task's own columns, then `sentence1` or
    `sentence`, each with `sentence2`.
    """
    own = own_keys(task)
    return ([own] if own is not None else []) + list(GENERIC_KEYS)


def expected_keys(task: SentenceTask) -> str:
    """What a line of `task` must have, for messages: `'text_a' and 'text_b' (...), or ...`."""
    generic = "'sentence1' and 'sentence2'" if task.is_pair else "'sentence'"
    own = own_keys(task)
    if own is None:
        return generic
    if not task.is_pair:
        return f"{own[0]!r} (task {task.name}'s column), or {generic}"
    return f"{own[0]!r} and {own[1]!r} (task {task.name}'s columns), or {generic}"


@Predictor.register("tft_sentence_pair")
class SentencePairPredictor(LineCheckingPredictor):
    """
    Scores sentence pairs (or single sentences) with a `tft_glue_classifier` or
    `tft_siamese_pair_classifier` archive.

    Input, one JSON object per line:

        {"sentence1": "The cat sat.", "sentence2": "A cat was sitting."}
        {"sentence": "The book was read by everyone."}

    or keyed by the task's own columns, as its JSON-lines files or the header of its TSV file
    name them (a task with `sentence1: 'text_a', sentence2: 'text_b'` takes
    `{"text_a": ..., "text_b": ...}`; QNLI `{"question": ..., "sentence": ...}`). The task's own
    names are used when its first one is in the line, `sentence1` (or `sentence`) otherwise.

    Output: the input's fields plus `label`, `probs` and `logits` for classification tasks, or
    `score` for STS-B (a Siamese model with a cosine objective gives `cosine` and `label` or
    `score`).

    A Siamese model's two sentence embeddings, `embedding1` and `embedding2` (lists of floats,
    the pooled vectors its objective compares), are added for a line with
    `"return_embeddings": true`, or for every line with the predictor option
    (`allennlp predict ... --predictor-args '{"return_embeddings": true}'`); a line's own
    `"return_embeddings"` wins over the option.

    A line that the model cannot take (not a JSON object, a sentence that is not non-empty text,
    one sentence for a pair task or two for a single-sentence one) stops prediction with a
    `MalformedInputError` naming its file and line: `pairs.jsonl:3: 'sentence2' must be
    non-empty text, not ""`.

    Registered as a `Predictor` with name "tft_sentence_pair".

    # Parameters

    model : `Model`
    dataset_reader : `DatasetReader`
    frozen : `bool`, optional (default = `True`)
    return_embeddings : `bool`, optional (default = `False`)
        Whether to return the sentence embeddings of lines that do not say; Siamese models only.
    batch_overhead : `int`, optional
    precision : `str`, optional (default = `"float32"`)
        As `LineCheckingPredictor`'s (`"bfloat16"`: forward passes under autocast).
    """

    def __init__(
        self,
        model: Model,
        dataset_reader: DatasetReader,
        frozen: bool = True,
        return_embeddings: bool = False,
        batch_overhead: Optional[int] = None,
        precision: str = "float32",
    ) -> None:
        super().__init__(model, dataset_reader, frozen, batch_overhead, precision)
        # A Siamese model declares its sentence embeddings (so does a wrapper of one).
        kinds = output_kinds(model) or {}
        self._siamese = all(kinds.get(key) == EMBEDDING for key in EMBEDDINGS)
        if return_embeddings and not self._siamese:
            raise ConfigurationError(
                "return_embeddings: only a Siamese model (tft_siamese_pair_classifier) gives "
                "sentence embeddings."
            )
        self._return_embeddings = return_embeddings

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        return self._dataset_reader.text_to_instance(  # type: ignore
            *self._checked(InputRecord(json_dict))
        )

    def _checked(self, request: InputRecord) -> Tuple[str, Optional[str]]:
        """The first (or only) sentence and the second one, if the task takes two."""
        task = self._dataset_reader.task  # type: ignore
        namings = sentence_keys(task)
        chosen = next((keys for keys in namings if keys[0] in request), None)
        if chosen is None:
            request.reject(f"expected {expected_keys(task)}")
        first, second = chosen
        sentence1 = request.text(first)
        sentence2 = request.text(second) if second is not None and second in request else None
        if task.is_pair != (sentence2 is not None):
            request.reject(
                f"task {task.name} takes two sentences: {second!r} is missing"
                if task.is_pair
                else f"task {task.name} takes one sentence: {second!r} is not expected"
            )
        self._wants_embeddings(request)
        return sentence1, sentence2

    def _wants_embeddings(self, request: InputRecord) -> bool:
        """Whether the embeddings go out for `request`: its `return_embeddings` or the option."""
        wanted = request.record.get("return_embeddings", self._return_embeddings)
        if not isinstance(wanted, bool):
            request.reject(f"'return_embeddings' must be true or false, not {shown(wanted)}")
        if wanted and not self._siamese:
            request.reject(
                "'return_embeddings': only a Siamese model (tft_siamese_pair_classifier) gives "
                "sentence embeddings"
            )
        return wanted

    def _shown(self, inputs: JsonDict, outputs: JsonDict) -> JsonDict:
        """The input's fields and the outputs, less the embeddings unless they were asked for."""
        if not self._wants_embeddings(InputRecord(inputs)):
            outputs = {key: value for key, value in outputs.items() if key not in EMBEDDINGS}
        return {**inputs, **outputs}

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self._shown(inputs, super().predict_json(inputs))

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        outputs = super().predict_batch_json(inputs)
        return [self._shown(given, output) for given, output in zip(inputs, outputs)]
