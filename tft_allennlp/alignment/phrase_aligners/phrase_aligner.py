from typing import Dict, List, Sequence, Tuple

from allennlp.common import Registrable

from tft_allennlp.alignment.phrase_aligner import ParsedSentence


class PhraseAligner(Registrable):
    """
    Aligns the phrases of one parsed sentence pair: what `allennlp tft-align` does to every
    pair after spaCy has split and parsed both sentences. The result is one record of the
    aligned corpus (`tft_allennlp.common.aligned_corpus.corpus_record`): the words, each side's
    phrases and the aligned phrase pairs. Register a subclass to align differently, and choose
    it with `tft-align --aligner`:

        @PhraseAligner.register("my_aligner")
        class MyAligner(PhraseAligner): ...

        allennlp tft-align pairs.tsv aligned.jsonl --include-package my_package \\
            --aligner '{"type": "my_aligner"}'

    Worker processes (`--workers`) build their own aligner from the same parameters, after
    importing the `--include-package` packages.
    """

    default_implementation = "tft_syntactic"

    def align(self, source: ParsedSentence, target: ParsedSentence) -> Dict:
        raise NotImplementedError

    def align_batch(self, pairs: Sequence[Tuple[ParsedSentence, ParsedSentence]]) -> List[Dict]:
        """
        The records of a batch of pairs, in order. `tft-align` calls this with each batch
        (`--batch-size`); override it to share work across the batch (one forward pass of an
        embedding model for all its sentences); by default it aligns pair by pair.
        """
        return [self.align(source, target) for source, target in pairs]
