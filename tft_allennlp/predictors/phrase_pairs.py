import itertools
from typing import TYPE_CHECKING, List

from allennlp.common.util import JsonDict, sanitize
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor

if TYPE_CHECKING:  # for annotations only
    from tft_allennlp.alignment.pipeline import Aligner


@Predictor.register("tft_phrase_pairs")
class PhrasePairsPredictor(Predictor):
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
    `{"source", "target", "source_span", "target_span", "paraphrase_probability", "label"}` in
    input order (pairs that truncation cut are left out).

    Registered as a `Predictor` with name "tft_phrase_pairs".
    """

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        if not any(
            key in json_dict for key in ("phrase_pairs", "source_phrases", "target_phrases")
        ):
            json_dict = {**json_dict, **self._syntactic_phrases(json_dict)}
        source = self._words(json_dict, "source", "sentence1")
        target = self._words(json_dict, "target", "sentence2")
        if "phrase_pairs" in json_dict:
            pairs = [(tuple(s), tuple(t)) for s, t in json_dict["phrase_pairs"]]
        elif "source_phrases" in json_dict and "target_phrases" in json_dict:
            pairs = [
                (tuple(s), tuple(t))
                for s, t in itertools.product(
                    json_dict["source_phrases"], json_dict["target_phrases"]
                )
            ]
        else:
            raise ValueError(
                "Give 'phrase_pairs', or 'source_phrases' and 'target_phrases', as word spans."
            )
        for words, spans in ((source, [s for s, _ in pairs]), (target, [t for _, t in pairs])):
            for start, end in spans:
                if not 0 <= start <= end < len(words):
                    raise ValueError(f"Span [{start}, {end}] is outside {len(words)} words.")
        return self._dataset_reader.text_to_instance(source, target, pairs)  # type: ignore

    def _get_aligner(self) -> "Aligner":
        """The aligner's spaCy pipeline, loaded on first use."""
        from tft_allennlp.alignment.pipeline import Aligner

        if getattr(self, "_aligner", None) is None:
            self._aligner = Aligner("en_core_web_sm")
        return self._aligner

    def _words(self, json_dict: JsonDict, words_key: str, text_key: str) -> List[str]:
        if words_key in json_dict:
            return list(json_dict[words_key])
        if text_key in json_dict:
            return self._get_aligner().split_words(json_dict[text_key])
        raise ValueError(f"Expected {words_key!r} (a list of words) or {text_key!r} (text).")

    def _syntactic_phrases(self, json_dict: JsonDict) -> JsonDict:
        """Words and phrase inventories of both sentences from the aligner's parser."""
        aligner = self._get_aligner()
        parsed = {}
        for side, words_key, text_key in (
            ("source", "source", "sentence1"),
            ("target", "target", "sentence2"),
        ):
            if words_key in json_dict:
                parsed[side] = aligner.parse_words(list(json_dict[words_key]))
            elif text_key in json_dict:
                parsed[side] = aligner.parse_text([json_dict[text_key]])[0]
            else:
                raise ValueError(
                    f"Expected {words_key!r} (a list of words) or {text_key!r} (text)."
                )
        return {
            "source": parsed["source"].words,
            "target": parsed["target"].words,
            "source_phrases": parsed["source"].phrases,
            "target_phrases": parsed["target"].phrases,
        }

    def predict_instance(self, instance: Instance) -> JsonDict:
        self._dataset_reader.apply_token_indexers(instance)
        return self._view(instance, self._model.forward_on_instance(instance))

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        for instance in instances:
            self._dataset_reader.apply_token_indexers(instance)
        outputs = self._model.forward_on_instances(instances)
        return [self._view(instance, output) for instance, output in zip(instances, outputs)]

    def _view(self, instance: Instance, output: JsonDict) -> JsonDict:
        metadata = instance["metadata"].metadata  # type: ignore
        source, target = metadata["source"], metadata["target"]
        view: JsonDict = {}
        if "sentence_probs" in output:
            paraphrase = self._model.vocab.get_token_index("paraphrase", "labels")
            view["paraphrase_probability"] = output["sentence_probs"][paraphrase]
        if "phrase_paraphrase_probs" in output:
            view["phrase_pairs"] = [
                {
                    "source": " ".join(source[s[0] : s[1] + 1]),
                    "target": " ".join(target[t[0] : t[1] + 1]),
                    "source_span": list(s),
                    "target_span": list(t),
                    "paraphrase_probability": probability,
                    "label": label,
                }
                for (s, t), probability, label in zip(
                    metadata["phrase_pairs"],
                    output["phrase_paraphrase_probs"],
                    output["phrase_labels"],
                )
            ]
        return sanitize(view)
