"""
Trains the learned aligner's scorers (`tft_allennlp.alignment.learned_scorer`) on monolingual
word-alignment gold in MultiMWA's layout, as `research/scripts/train_learned_aligner.py` does:

1. Each genre's training pairs are shuffled (a fixed seed) and split: `select_fraction` of them
   (20%) is held out for selection, the rest fits the models.
2. Link scorer: every word pair of a sentence pair is an example, positive when the gold links
   it (sure or possible); the negatives are subsampled and weighted (`fit_link_scorer`). A
   logistic regression fits the first round's features; a second one fits them together with
   the first round's scores of the neighbours and the heads (in-sample scores: a linear model
   of some sixty features hardly overfits millions of word pairs).
3. For each link threshold of `LINK_THRESHOLDS`, the phrase pairs of the fit split's links are
   examples of the pair scorer, positive when consistent with the gold (a gold link joins the
   two spans and no sure link leaves either); on the held-out split, the pair threshold is the
   least of `PAIR_THRESHOLDS` at which the non-identical pairs of every genre reach
   `target_precision`. The link threshold kept is the one whose pairs then cover the most sure
   links between different words (the mean over genres). Nothing is chosen on a development set.
"""

import logging
import math
import random
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy

from tft_allennlp.alignment.evaluation import (
    WordAlignmentGold,
    consistent,
    evaluate_word_alignment,
    read_multimwa,
)
from tft_allennlp.alignment.learned_scorer import (
    PAIR_FEATURES,
    LearnedScorer,
    LogisticModel,
    pair_features,
)
from tft_allennlp.alignment.link_features import SECOND_ROUND_FEATURES, LinkFeatures
from tft_allennlp.alignment.pair_rules import PairRule, phrase_pairs
from tft_allennlp.alignment.parsed_sentence import ParsedSentence
from tft_allennlp.alignment.phrase_aligners import LearnedPhraseAligner
from tft_allennlp.alignment.phrase_aligners.phrase_aligner import build_rules
from tft_allennlp.alignment.pipeline import AlignmentPipeline
from tft_allennlp.alignment.word_embedder import StaticWordVectors, WordEmbedder
from tft_allennlp.common.aligned_corpus import PhrasePair

logger = logging.getLogger(__name__)

LINK_THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7)
PAIR_THRESHOLDS = tuple(round(0.05 * k, 2) for k in range(20))


class GoldPair(NamedTuple):
    """A gold sentence pair, parsed, with the cosine matrices of its word vectors ("static",
    "contextual": `LinkFeatures.first_round`)."""

    genre: str
    gold: WordAlignmentGold
    source: ParsedSentence
    target: ParsedSentence
    similarities: Dict[str, numpy.ndarray]


def load_gold_pairs(
    files: Dict[str, str],
    pipeline: AlignmentPipeline,
    vectors: Optional[Dict[str, Union[StaticWordVectors, WordEmbedder]]] = None,
) -> List[GoldPair]:
    """The pairs of each genre's MultiMWA file, parsed as tokenized, with the cosine matrices of
    each of `vectors` ("static", "contextual")."""
    pairs = []
    for genre, path in files.items():
        golds = read_multimwa(path)
        sentences = [words for gold in golds for words in (gold.source, gold.target)]
        parsed = pipeline.parse_word_lists(sentences)
        similarities: List[Dict[str, numpy.ndarray]] = [{} for _ in golds]
        for name, model in (vectors or {}).items():
            batch = model.vectors_batch(sentences)
            for k in range(len(golds)):
                similarities[k][name] = batch[2 * k] @ batch[2 * k + 1].T
        for k, gold in enumerate(golds):
            pairs.append(GoldPair(genre, gold, parsed[2 * k], parsed[2 * k + 1], similarities[k]))
        logger.info("%s: %d pairs from %s", genre, len(golds), path)
    return pairs


def split(
    pairs: Sequence[GoldPair], select_fraction: float = 0.2, seed: int = 44
) -> Tuple[List[GoldPair], List[GoldPair]]:
    """(fit, select): each genre's pairs shuffled with `seed`, `select_fraction` held out."""
    fit: List[GoldPair] = []
    select: List[GoldPair] = []
    for genre in sorted({pair.genre for pair in pairs}):
        mine = [pair for pair in pairs if pair.genre == genre]
        random.Random(seed).shuffle(mine)
        held_out = round(len(mine) * select_fraction)
        select += mine[:held_out]
        fit += mine[held_out:]
    return fit, select


def fit_logistic(
    features: numpy.ndarray,
    labels: numpy.ndarray,
    names: List[str],
    weights: Optional[numpy.ndarray] = None,
) -> LogisticModel:
    """A logistic regression (L2, C = 1) as a `LogisticModel`; where every label is the same,
    the model that gives every example that label's smoothed frequency."""
    from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]

    if len(set(labels.tolist())) < 2:
        sign = 1.0 if labels.size and labels[0] > 0 else -1.0
        return LogisticModel(names, [0.0] * len(names), sign * math.log(labels.size + 1))

    model = LogisticRegression(C=1.0, max_iter=3000).fit(features, labels, sample_weight=weights)
    return LogisticModel(names, [float(w) for w in model.coef_[0]], float(model.intercept_[0]))


def gold_matrix(pair: GoldPair) -> numpy.ndarray:
    """1 where the gold links two words (sure or possible)."""
    labels = numpy.zeros((len(pair.gold.source), len(pair.gold.target)), dtype=numpy.float32)
    for i, j in pair.gold.possible:
        labels[i, j] = 1.0
    return labels


def fit_link_scorer(
    features: LinkFeatures,
    pairs: Sequence[GoldPair],
    negative_share: float = 0.25,
    seed: int = 44,
) -> Tuple[LogisticModel, LogisticModel]:
    """
    The two rounds of the link scorer, fit on the word pairs of `pairs`: every linked one and a
    random `negative_share` of the others, weighted by its inverse (so the fit is that of all
    word pairs, in a quarter of the memory).
    """
    first_width = len(features.names)
    sizes = [len(p.source.words) * len(p.target.words) for p in pairs]
    offsets = numpy.concatenate([[0], numpy.cumsum(sizes)])
    # Shape: (word pairs, first-round and second-round features)
    table = numpy.zeros((offsets[-1], first_width + len(SECOND_ROUND_FEATURES)), numpy.float32)
    labels = numpy.zeros(offsets[-1], dtype=numpy.float32)
    for k, pair in enumerate(pairs):
        row = features.first_round(pair.source, pair.target, pair.similarities)
        table[offsets[k] : offsets[k + 1], :first_width] = row.reshape(-1, first_width)
        labels[offsets[k] : offsets[k + 1]] = gold_matrix(pair).ravel()
    kept = (labels > 0) | (numpy.random.RandomState(seed).rand(len(labels)) < negative_share)
    weights = numpy.where(labels[kept] > 0, 1.0, 1.0 / negative_share)
    first = fit_logistic(table[kept, :first_width], labels[kept], features.names, weights)
    for k, pair in enumerate(pairs):
        block = table[offsets[k] : offsets[k + 1]]
        shape = (len(pair.source.words), len(pair.target.words), first_width)
        scores = first.probabilities(block[:, :first_width].reshape(shape))
        second = features.second_round(scores, pair.source, pair.target)
        block[:, first_width:] = second.reshape(-1, len(SECOND_ROUND_FEATURES))
    names = features.names + list(SECOND_ROUND_FEATURES)
    second_model = fit_logistic(table[kept], labels[kept], names, weights)
    return first, second_model


def link_scores(
    features: LinkFeatures, first: LogisticModel, second: LogisticModel, pair: GoldPair
) -> numpy.ndarray:
    """The second round's scores of every word pair of `pair`."""
    row = features.first_round(pair.source, pair.target, pair.similarities)
    scores = first.probabilities(row)
    both = numpy.concatenate([row, features.second_round(scores, pair.source, pair.target)], -1)
    return second.probabilities(both)


class Candidates(NamedTuple):
    """The phrase pairs that a link threshold gives for one gold pair, with their features and
    whether each is consistent with the gold."""

    pairs: List[PhrasePair]
    features: numpy.ndarray
    consistent: List[bool]
    links: set


def candidates(
    pair: GoldPair,
    scores: numpy.ndarray,
    link_threshold: float,
    pair_rules: Optional[Sequence[PairRule]] = None,
) -> Candidates:
    """The learned aligner's pairs before the pair scorer (rules 3, 5 and 6: its default
    `pair_rules`)."""
    links = {(int(i), int(j)) for i, j in zip(*numpy.nonzero(scores >= link_threshold))}
    if pair_rules is None:
        pair_rules = build_rules(PairRule, LearnedPhraseAligner.PAIR_RULES)
    pairs = phrase_pairs(pair.source, pair.target, links, pair_rules)
    return Candidates(
        pairs,
        pair_features(pair.source, pair.target, scores, links, pairs),
        [consistent(p, pair.gold.sure, pair.gold.possible) for p in pairs],
        links,
    )


def quality(
    golds: Sequence[GoldPair],
    found: Sequence[Candidates],
    scores: Sequence[numpy.ndarray],
    least: float,
) -> Dict[str, float]:
    """The evaluation's scores of the pairs whose pair score (`scores`) reaches `least`."""
    kept = [
        [p for p, value in zip(c.pairs, values) if value >= least]
        for c, values in zip(found, scores)
    ]
    return evaluate_word_alignment(
        [g.gold for g in golds], kept, word_links=[c.links for c in found]
    )


def select_thresholds(
    features: LinkFeatures,
    first: LogisticModel,
    second: LogisticModel,
    fit: Sequence[GoldPair],
    select: Sequence[GoldPair],
    target_precision: float,
    link_thresholds: Sequence[float] = LINK_THRESHOLDS,
) -> Tuple[float, LogisticModel, float, List[Dict]]:
    """Step 3 of the module's description: (link threshold, pair scorer, pair threshold, a row
    per link threshold of what the held-out split gave)."""
    fit_scores = [link_scores(features, first, second, p) for p in fit]
    select_scores = [link_scores(features, first, second, p) for p in select]
    genres = sorted({p.genre for p in select})
    rules = build_rules(PairRule, LearnedPhraseAligner.PAIR_RULES)
    best = None
    rows: List[Dict[str, Any]] = []
    for link_threshold in link_thresholds:
        fit_found = [candidates(p, s, link_threshold, rules) for p, s in zip(fit, fit_scores)]
        pair_model = fit_logistic(
            numpy.concatenate([c.features for c in fit_found]),
            numpy.array([y for c in fit_found for y in c.consistent], dtype=float),
            list(PAIR_FEATURES),
        )
        found = [candidates(p, s, link_threshold, rules) for p, s in zip(select, select_scores)]
        values = [pair_model.probabilities(c.features) for c in found]
        chosen = None
        for least in PAIR_THRESHOLDS:
            per_genre = {
                genre: quality(
                    [g for g in select if g.genre == genre],
                    [c for g, c in zip(select, found) if g.genre == genre],
                    [v for g, v in zip(select, values) if g.genre == genre],
                    least,
                )
                for genre in genres
            }
            if all(
                s["phrase_precision_non_identical"] >= target_precision for s in per_genre.values()
            ):
                chosen = (least, per_genre)
                break
        if chosen is None:
            rows.append({"link_threshold": link_threshold, "pair_threshold": None})
            continue
        least, per_genre = chosen
        coverage = float(numpy.mean([s["phrase_recall_non_identical"] for s in per_genre.values()]))
        row = {"link_threshold": link_threshold, "pair_threshold": least, "coverage": coverage}
        for genre, s in per_genre.items():
            for key in ("word_f1", "phrase_precision_non_identical", "phrase_recall_non_identical"):
                row[f"{genre}_{key}"] = round(s[key], 4)
        rows.append(row)
        logger.info("held out: %s", row)
        if best is None or coverage > best[0]:
            best = (coverage, link_threshold, pair_model, least)
    if best is None:
        raise ValueError(f"no thresholds reach a precision of {target_precision} held out")
    _, link_threshold, pair_model, pair_threshold = best
    return link_threshold, pair_model, pair_threshold, rows


def train_scorer(
    features: LinkFeatures,
    pairs: Sequence[GoldPair],
    encoder: Dict,
    target_precision: float = 0.85,
    seed: int = 44,
    select_fraction: float = 0.2,
    provenance: Optional[Dict] = None,
) -> LearnedScorer:
    """The whole procedure of the module's description."""
    fit, select = split(pairs, select_fraction, seed)
    first, second = fit_link_scorer(features, fit)
    link_threshold, pair_model, pair_threshold, rows = select_thresholds(
        features, first, second, fit, select, target_precision
    )
    return LearnedScorer(
        features.groups,
        encoder,
        first,
        second,
        link_threshold,
        pair_model,
        pair_threshold,
        {
            **(provenance or {}),
            "fit_pairs": len(fit),
            "select_pairs": len(select),
            "seed": seed,
            "target_precision": target_precision,
            "selection": rows,
        },
    )
