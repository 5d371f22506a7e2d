import itertools
import logging
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple, Union

from allennlp.common.util import JsonDict, sanitize
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor

from tft_allennlp.predictors.predictor_input import InputRecord, LineCheckingPredictor, PhrasePair

if TYPE_CHECKING:  # for annotations only
    from tft_allennlp.alignment.pipeline import AlignmentPipeline

logger = logging.getLogger(__name__)


@Predictor.register("tft_phrase_pairs")
class PhrasePairsPredictor(LineCheckingPredictor):
    """
    Says how likely two sentences, and each pair of their phrases, are paraphrases, with a
    `tft_paraphrase_injector` archive.

    Input, one JSON object per line: the sentences as text (`sentence1`, `sentence2`) or as
    word lists (`source`, `target`), and the phrases, as word spans (inclusive), either as
    explicit pairs or as one inventory per side, all of whose combinations are scored. Without
    phrases, the syntactic phrases that `allennlp tft-align` finds are paired in all
    combinations. Text is split into words as `allennlp tft-align` splits it (spaCy's
    `en_core_web_sm` tokenizer), so that spans read off its output point at the same words:

        {"sentence1": "A man is playing a flute .", "sentence2": "A man plays the flute .",
         "phrase_pairs": [[[3, 5], [2, 4]], [[0, 1], [3, 4]]]}
        {"source": ["A", "man", "sleeps"], "target": ["A", "man", "is", "asleep"],
         "source_phrases": [[0, 1], [2, 2]], "target_phrases": [[0, 1], [2, 3]]}

    Output: `paraphrase_probability` of the sentence pair and `phrase_pairs`, a list of
    `{"source", "target", "source_span", "target_span", "paraphrase_probability", "label",
    "probabilities"}` in input order, one per pair asked for; `probabilities` holds the phrase
    head's probability of each of its labels (`paraphrase`, `random`, `in_paraphrase`). A pair
    that the model cannot see (cut off by truncation to the reader's `max_length`, or of words
    without wordpieces) keeps its place with `"paraphrase_probability": null`, `"label": null`,
    `"probabilities": null` and `"left_out"` saying why, and is counted in a warning.

    A line that the model cannot take (not a JSON object, empty text, a word list that is not a
    list of words, a span that is not `[start, end]`, start <= end, in its sentence) stops
    prediction with a `MalformedInputError` naming its file and line: `phrases.jsonl:3:
    'sentence2' must be non-empty text, not ""`.

    Registered as a `Predictor` with name "tft_phrase_pairs".
    """

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        sentences, pairs = self._checked(InputRecord(json_dict))
        if pairs is None:
            parser = self._get_parser()
            parsed = [
                parser.parse_words(s) if isinstance(s, list) else parser.parse_text([s])[0]
                for s in sentences
            ]
            sentences = [sentence.words for sentence in parsed]
            pairs = list(itertools.product(parsed[0].phrases, parsed[1].phrases))
        instance = self._dataset_reader.text_to_instance(*sentences, pairs)  # type: ignore
        metadata = instance["metadata"].metadata  # type: ignore
        metadata["requested_phrase_pairs"] = [(tuple(s), tuple(t)) for s, t in pairs]
        return instance

    def _checked(
        self, request: InputRecord
    ) -> Tuple[List[Union[List[str], str]], Optional[List[PhrasePair]]]:
        """
        Both sentences, and the phrase pairs to score: None when no phrases are given (the
        aligner's parser then finds them, and the sentences stay as given, words or text);
        otherwise the sentences are split into words, which the spans are checked against.
        """
        sentences = [
            request.words_or_text("source", "sentence1"),
            request.words_or_text("target", "sentence2"),
        ]
        if not any(key in request for key in ("phrase_pairs", "source_phrases", "target_phrases")):
            return sentences, None
        source, target = [
            s if isinstance(s, list) else self._get_parser().split_words(s) for s in sentences
        ]
        if "phrase_pairs" in request:
            return [source, target], request.phrase_pairs("phrase_pairs", source, target)
        if "source_phrases" not in request or "target_phrases" not in request:
            request.reject(
                "give 'phrase_pairs', or 'source_phrases' and 'target_phrases', as word spans"
            )
        inventories = (
            request.spans("source_phrases", source),
            request.spans("target_phrases", target),
        )
        return [source, target], list(itertools.product(*inventories))

    def _get_parser(self) -> "AlignmentPipeline":
        """The alignment pipeline, for its spaCy parse, loaded on first use."""
        from tft_allennlp.alignment.pipeline import AlignmentPipeline, resolve_spacy_model

        if getattr(self, "_parser", None) is None:
            # The plugin's own choice of parser, so its installed twin is used without a word.
            self._parser = AlignmentPipeline(resolve_spacy_model("en_core_web_sm"))
        return self._parser

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        outputs = self._forward_in_length_order(instances)
        return [self._view(instance, output) for instance, output in zip(instances, outputs)]

    def _view(self, instance: Instance, output: JsonDict) -> JsonDict:
        metadata = instance["metadata"].metadata  # type: ignore
        source, target = metadata["source"], metadata["target"]
        view: JsonDict = {}
        if "sentence_probs" in output:
            paraphrase = self._model.vocab.get_token_index("paraphrase", "labels")
            view["paraphrase_probability"] = output["sentence_probs"][paraphrase]
        if "phrase_paraphrase_probs" in output:
            scored = {
                pair: (probability, label, distribution)
                for pair, probability, label, distribution in zip(
                    metadata["phrase_pairs"],
                    output["phrase_paraphrase_probs"],
                    output["phrase_labels"],
                    self._distributions(output),
                )
            }
            requested = metadata.get("requested_phrase_pairs", metadata["phrase_pairs"])
            # Sanitized one by one: AllenNLP's `sanitize` would write a left-out pair's None
            # values as "None".
            pairs = [
                self._pair_view(source, target, s, t, scored.get((s, t))) for s, t in requested
            ]
            left_out = sum(1 for pair in requested if pair not in scored)
            if left_out:
                logger.warning(
                    "%d of %d phrase pairs left out (cut off by truncation to the reader's "
                    "max_length, or words without wordpieces); marked with 'left_out'.",
                    left_out,
                    len(requested),
                )
        view = sanitize(view)
        if "phrase_paraphrase_probs" in output:
            view["phrase_pairs"] = pairs
        return view

    def _distributions(self, output: JsonDict) -> List[Dict[str, float]]:
        """The phrase head's probability of every label, for each real phrase pair in order."""
        labels = self._model.vocab.get_index_to_token_vocabulary("phrase_labels")
        real = output["phrase_probs"][output["phrase_mask"].astype(bool)]
        return [{labels[index]: float(value) for index, value in enumerate(row)} for row in real]

    @staticmethod
    def _pair_view(
        source: List[str],
        target: List[str],
        source_span: Tuple[int, int],
        target_span: Tuple[int, int],
        scored: Optional[Tuple[float, str, Dict[str, float]]],
    ) -> JsonDict:
        view: JsonDict = {
            "source": " ".join(source[source_span[0] : source_span[1] + 1]),
            "target": " ".join(target[target_span[0] : target_span[1] + 1]),
            "source_span": list(source_span),
            "target_span": list(target_span),
            "paraphrase_probability": None if scored is None else sanitize(scored[0]),
            "label": None if scored is None else sanitize(scored[1]),
            "probabilities": None if scored is None else scored[2],
        }
        if scored is None:
            view["left_out"] = "not in the encoded text (truncated to max_length, or no wordpieces)"
        return view
