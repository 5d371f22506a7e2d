import random
from typing import List, Sequence

from allennlp.common import Registrable

from tft_allennlp.common.aligned_corpus import AlignedPair, PhrasePair, Span


class NegativeSampler(Registrable):
    """
    Chooses the negatives of paraphrasal relation injection for one aligned paraphrase pair
    `(s, t)` of the corpus:

    - random sentence pairs: other pairs of the same block of the corpus whose target `t'`
      replaces `t` (label `random`);
    - in-paraphrase phrase pairs: for an aligned phrase pair `(ps, pt)` of `(s, t)`, other
      phrases of `t` to pair with `ps` (label `in_paraphrase`);
    - random phrase pairs: phrases of `s` paired with phrases of `t'` in a random sentence pair
      (label `random`).

    The reader passes only candidates that survive truncation, and a seeded `random.Random`
    per line, so that a sampler's choices do not depend on how reading is sharded. Register a
    subclass to try other negatives (harder ones, say) by config:

        @NegativeSampler.register("my_negatives")
        class MyNegatives(NegativeSampler): ...

        "dataset_reader": {"type": "tft_aligned_paraphrases",
                           "negative_sampler": {"type": "my_negatives"}, ...}
    """

    default_implementation = "tft_paper"

    def random_partners(
        self, pair: AlignedPair, block: Sequence[AlignedPair], rng: random.Random
    ) -> List[AlignedPair]:
        """The pairs of `block` whose targets make `pair`'s random sentence pairs."""
        raise NotImplementedError

    def in_paraphrase_targets(
        self, aligned: PhrasePair, candidates: Sequence[Span], rng: random.Random
    ) -> List[Span]:
        """
        Target phrases to pair with the source phrase of `aligned` as in-paraphrase negatives;
        `candidates` are the target sentence's phrases not aligned to that source phrase.
        """
        raise NotImplementedError

    def random_phrase_pairs(
        self, source_phrases: Sequence[Span], target_phrases: Sequence[Span], rng: random.Random
    ) -> List[PhrasePair]:
        """Phrase pairs of a random sentence pair, from the phrases of `s` and of `t'`."""
        raise NotImplementedError
