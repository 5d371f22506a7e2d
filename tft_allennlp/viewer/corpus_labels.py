"""
The labels that the injection corpus gives the phrase pairs of a shown pair, drawn as the
injection reader (`tft_aligned_paraphrases`) draws them: every alignment is a `paraphrase`
phrase pair, followed by its `in_paraphrase` negatives; each random partner's target makes a
random sentence pair, whose phrase pairs are `random`. The negatives come from the reader's
`NegativeSampler`, seed and `binary` setting (an injection archive's, or the defaults of
`training_configs/injection/`), with the reader's per-line random generators, so that a line's
in-paraphrase negatives are the ones the reader draws for it (unless truncation to the model's
`max_length` drops phrases there). Random partners come from the pairs shown, where the reader
draws them from its block of `buffer_size` lines.
"""

import random
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from allennlp.common import Params

from tft_allennlp.common.aligned_corpus import AlignedPair, PhrasePair
from tft_allennlp.dataset_readers.aligned_paraphrases import IN_PARAPHRASE, PARAPHRASE, RANDOM
from tft_allennlp.dataset_readers.negative_samplers import NegativeSampler, PaperNegativeSampler

LabelledPair = Tuple[PhrasePair, str]
"""A phrase pair and its label: `paraphrase`, `in_paraphrase` or `random`."""

DEFAULT_SEED = 13370
"""The reader's seed in `training_configs/common/injection.libsonnet` (and its default)."""


class Sampling(NamedTuple):
    """How the injection corpus draws its negatives."""

    sampler: NegativeSampler
    seed: int
    binary: bool


class RandomPair(NamedTuple):
    """A random sentence pair: the shown pair's source with the target of `partner`."""

    partner: AlignedPair
    phrase_pairs: List[LabelledPair]


class CorpusLabels(NamedTuple):
    """The phrase pairs of one shown pair, labelled as the injection corpus labels them."""

    phrase_pairs: List[LabelledPair]
    """Of the pair itself: alignments (`paraphrase`), each followed by its negatives."""
    random_pairs: List[RandomPair]


def reader_sampling(reader: Optional[Dict[str, Any]] = None) -> Sampling:
    """
    The sampling of an injection reader's parameters (`tft_aligned_paraphrases`, as an archive's
    config holds them), or of the shipped injection configs when `reader` is None.
    """
    reader = reader or {}
    sampler_params = reader.get("negative_sampler")
    sampler = (
        NegativeSampler.from_params(Params(dict(sampler_params)))
        if sampler_params is not None
        else PaperNegativeSampler()
    )
    return Sampling(sampler, int(reader.get("seed", DEFAULT_SEED)), bool(reader.get("binary")))


def corpus_labels(
    pair: AlignedPair, shown: Sequence[AlignedPair], sampling: Sampling
) -> CorpusLabels:
    """
    `pair`'s labelled phrase pairs and random sentence pairs, random partners drawn from `shown`
    (the order of draws is the reader's: in-paraphrase negatives alignment by alignment, then
    each random pair's phrase pairs).
    """
    rng = random.Random(f"{sampling.seed}:{pair.line_number}")
    labelled: List[LabelledPair] = []
    for source_span, target_span in pair.alignments:
        labelled.append(((source_span, target_span), PARAPHRASE))
        aligned = {t for s, t in pair.alignments if s == source_span}
        candidates = [t for t in pair.target_phrases if t not in aligned]
        negatives = sampling.sampler.in_paraphrase_targets(
            (source_span, target_span), candidates, rng
        )
        labelled.extend(((source_span, negative), IN_PARAPHRASE) for negative in negatives)
    partner_rng = random.Random(f"{sampling.seed}:{pair.line_number}:partners")
    partners = sampling.sampler.random_partners(pair, list(shown), partner_rng)
    random_pairs = []
    for partner in partners:
        phrase_pairs: List[PhrasePair] = []
        if not sampling.binary:
            phrase_pairs = sampling.sampler.random_phrase_pairs(
                pair.source_phrases, partner.target_phrases, rng
            )
        random_pairs.append(RandomPair(partner, [(p, RANDOM) for p in phrase_pairs]))
    return CorpusLabels(labelled, random_pairs)
