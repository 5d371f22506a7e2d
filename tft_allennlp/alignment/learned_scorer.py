"""
The trained parameters of the learned aligner (`tft_learned`): two rounds of a logistic link
scorer over `tft_allennlp.alignment.link_features`, the score a word pair needs to link, and a
logistic phrase-pair scorer with the score a pair needs to be kept. They live in one small JSON
file, written by `research/scripts/train_learned_aligner.py` and read by `LearnedScorer.from_file`.
"""

import json
import math
from typing import Any, Dict, List, NamedTuple, Sequence, Set

import numpy
from allennlp.common.checks import ConfigurationError

from tft_allennlp.alignment.link_features import SECOND_ROUND_FEATURES, feature_names
from tft_allennlp.alignment.link_rules import Link
from tft_allennlp.alignment.parsed_sentence import CONTENT_POS, ParsedSentence
from tft_allennlp.common.aligned_corpus import PhrasePair

PAIR_FEATURES = (
    "least_link_score",
    "mean_link_score",
    "source_leak",
    "target_leak",
    "leak",
    "source_log_length",
    "target_log_length",
    "log_length_ratio",
    "single_words",
    "identical",
    "source_unlinked_content",
    "target_unlinked_content",
    "fewer_unlinked_content",
    "unlinked_content_difference",
    "linked_share",
    "least_source_word_best",
    "least_target_word_best",
)


class LogisticModel(NamedTuple):
    """`sigmoid(features @ weights + bias)`, with the feature names the weights belong to."""

    names: List[str]
    weights: List[float]
    bias: float

    def probabilities(self, features: numpy.ndarray) -> numpy.ndarray:
        """`features`: shape `(..., len(names))`; the result has shape `(...)`."""
        logits = features @ numpy.asarray(self.weights) + self.bias
        return 1.0 / (1.0 + numpy.exp(-logits))

    def as_json(self) -> Dict[str, Any]:
        return {"names": self.names, "weights": self.weights, "bias": self.bias}

    @classmethod
    def from_json(cls, value: Dict[str, Any]) -> "LogisticModel":
        names, weights = list(value["names"]), [float(w) for w in value["weights"]]
        if len(names) != len(weights):
            raise ValueError(f"{len(names)} feature names but {len(weights)} weights")
        return cls(names, weights, float(value["bias"]))


class LearnedScorer(NamedTuple):
    """
    The parameters of one trained learned aligner.

    groups : the link features' groups (`tft_allennlp.alignment.link_features.GROUPS`).
    encoder : for "static" and "contextual" features, the checkpoint (`"installed"`: the
        all-MiniLM-L6-v2 package) and, for "contextual", the layer read.
    first_round, second_round : the link scorer's two rounds.
    link_threshold : the least second-round score of a link.
    pair_model, pair_threshold : the phrase-pair scorer and the least score of a kept pair.
    provenance : how the file was made (command, data, the selection on a split of train).
    """

    groups: List[str]
    encoder: Dict[str, Any]
    first_round: LogisticModel
    second_round: LogisticModel
    link_threshold: float
    pair_model: LogisticModel
    pair_threshold: float
    provenance: Dict[str, Any]

    def as_json(self) -> Dict[str, Any]:
        return {
            "groups": self.groups,
            "encoder": self.encoder,
            "first_round": self.first_round.as_json(),
            "second_round": self.second_round.as_json(),
            "link_threshold": self.link_threshold,
            "pair_model": self.pair_model.as_json(),
            "pair_threshold": self.pair_threshold,
            "provenance": self.provenance,
        }

    @classmethod
    def from_file(cls, path: str) -> "LearnedScorer":
        """Reads and checks a scorer file; a `ConfigurationError` naming it if it is not one or
        was made for other features than this code computes."""
        try:
            with open(path, encoding="utf-8") as handle:
                value = json.load(handle)
            scorer = cls(
                list(value["groups"]),
                dict(value["encoder"]),
                LogisticModel.from_json(value["first_round"]),
                LogisticModel.from_json(value["second_round"]),
                float(value["link_threshold"]),
                LogisticModel.from_json(value["pair_model"]),
                float(value["pair_threshold"]),
                dict(value.get("provenance", {})),
            )
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ConfigurationError(f"{path}: not a learned aligner's scorer file: {error}")
        first = feature_names(scorer.groups)
        for model, names in (
            (scorer.first_round, first),
            (scorer.second_round, first + list(SECOND_ROUND_FEATURES)),
            (scorer.pair_model, list(PAIR_FEATURES)),
        ):
            if model.names != names:
                raise ConfigurationError(
                    f"{path}: made for other features than this code computes (retrain it "
                    "with research/scripts/train_learned_aligner.py)"
                )
        return scorer


def pair_features(
    source: ParsedSentence,
    target: ParsedSentence,
    scores: numpy.ndarray,
    links: Set[Link],
    pairs: Sequence[PhrasePair],
) -> numpy.ndarray:
    """
    Shape `(len(pairs), len(PAIR_FEATURES))`: for each phrase pair, the scores of the links
    inside it (least, mean), the best score of a word pair that leaves it (a word inside one
    span with a word outside the other: a link the decision missed would make the pair
    inconsistent), its lengths, whether it is identical, its unlinked content words, the share
    of its words linked, and the least best score of a word of either span inside the pair.
    `scores` is the link scorer's `(len(source), len(target))` matrix.
    """
    linked_source, linked_target = {i for i, _ in links}, {j for _, j in links}
    rows = []
    for (s0, s1), (t0, t1) in pairs:
        inside = scores[s0 : s1 + 1, t0 : t1 + 1]
        inside_links = [scores[i, j] for i, j in links if s0 <= i <= s1 and t0 <= j <= t1]
        source_rows = scores[s0 : s1 + 1]
        target_columns = scores[:, t0 : t1 + 1]
        source_leak = max(
            [source_rows[:, :t0].max(initial=0.0), source_rows[:, t1 + 1 :].max(initial=0.0)]
        )
        target_leak = max(
            [target_columns[:s0].max(initial=0.0), target_columns[s1 + 1 :].max(initial=0.0)]
        )
        source_length, target_length = s1 - s0 + 1, t1 - t0 + 1
        source_unlinked = sum(
            1 for i in range(s0, s1 + 1) if i not in linked_source and source.pos[i] in CONTENT_POS
        )
        target_unlinked = sum(
            1 for j in range(t0, t1 + 1) if j not in linked_target and target.pos[j] in CONTENT_POS
        )
        identical = [w.lower() for w in source.words[s0 : s1 + 1]] == [
            w.lower() for w in target.words[t0 : t1 + 1]
        ]
        rows.append(
            [
                min(inside_links, default=0.0),
                float(numpy.mean(inside_links)) if inside_links else 0.0,
                source_leak,
                target_leak,
                max(source_leak, target_leak),
                math.log(source_length),
                math.log(target_length),
                abs(math.log(source_length / target_length)),
                float(source_length == target_length == 1),
                float(identical),
                source_unlinked,
                target_unlinked,
                min(source_unlinked, target_unlinked),
                abs(source_unlinked - target_unlinked),
                len(inside_links) / max(source_length, target_length),
                inside.max(axis=1).min(),
                inside.max(axis=0).min(),
            ]
        )
    return numpy.array(rows, dtype=numpy.float64).reshape(len(pairs), len(PAIR_FEATURES))
