"""A user's aligner, for the tests: aligns the whole source sentence with the whole target."""

from typing import Dict

from tft_allennlp.alignment.parsed_sentence import ParsedSentence
from tft_allennlp.alignment.phrase_aligners import PhraseAligner
from tft_allennlp.common.aligned_corpus import corpus_record


@PhraseAligner.register("test_whole_sentence")
class WholeSentenceAligner(PhraseAligner):
    def __init__(self, label: str = "whole") -> None:
        self.label = label

    def align(self, source: ParsedSentence, target: ParsedSentence) -> Dict:
        whole = ((0, len(source.words) - 1), (0, len(target.words) - 1))
        record = corpus_record(source.words, target.words, [whole[0]], [whole[1]], [whole])
        return {**record, "aligner": self.label}
