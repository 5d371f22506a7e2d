import random
from typing import List, Sequence

from allennlp.common.checks import ConfigurationError

from tft_allennlp.common.aligned_corpus import AlignedPair, PhrasePair, Span
from tft_allennlp.dataset_readers.negative_samplers.negative_sampler import NegativeSampler


@NegativeSampler.register("tft_paper")
class PaperNegativeSampler(NegativeSampler):
    """
    The negatives of Arase & Tsujii (2019, Algorithm 4.1), all drawn uniformly:

    - `random_pairs_per_paraphrase` random sentence pairs per paraphrase pair, with the targets
      of other pairs of the block (never one with the same target words);
    - one in-paraphrase negative per aligned phrase pair: a target phrase not aligned to its
      source phrase;
    - in a random sentence pair, every source phrase with a random phrase of `t'`.

    Registered as a `NegativeSampler` with name "tft_paper".

    # Parameters

    random_pairs_per_paraphrase : `int`, optional (default = `1`)
        Random sentence pairs per paraphrase pair (fewer when the block has too few other
        targets; the reader counts the shortfall).
    """

    def __init__(self, random_pairs_per_paraphrase: int = 1) -> None:
        if random_pairs_per_paraphrase < 0:
            raise ConfigurationError("random_pairs_per_paraphrase must be >= 0.")
        self.random_pairs_per_paraphrase = random_pairs_per_paraphrase

    def random_partners(
        self, pair: AlignedPair, block: Sequence[AlignedPair], rng: random.Random
    ) -> List[AlignedPair]:
        candidates = [other for other in block if other.target != pair.target]
        return rng.sample(candidates, min(self.random_pairs_per_paraphrase, len(candidates)))

    def in_paraphrase_targets(
        self, aligned: PhrasePair, candidates: Sequence[Span], rng: random.Random
    ) -> List[Span]:
        return [rng.choice(candidates)] if candidates else []

    def random_phrase_pairs(
        self, source_phrases: Sequence[Span], target_phrases: Sequence[Span], rng: random.Random
    ) -> List[PhrasePair]:
        if not target_phrases:
            return []
        return [(source, rng.choice(target_phrases)) for source in source_phrases]
