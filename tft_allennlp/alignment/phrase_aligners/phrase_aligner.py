import copy
from typing import Any, Dict, List, Sequence, Set, Tuple, Type, TypeVar, Union

from allennlp.common import Params, Registrable

from tft_allennlp.alignment.link_rules import Link
from tft_allennlp.alignment.parsed_sentence import ParsedSentence
from tft_allennlp.common.aligned_corpus import PhrasePair, corpus_record


class PhraseAligner(Registrable):
    """
    The aligner: aligns the phrases of one parsed sentence pair, what `allennlp tft-align` does
    to every pair after spaCy has split and parsed both sentences. The result is one record of
    the aligned corpus (`tft_allennlp.common.aligned_corpus.corpus_record`): the words, each
    side's phrases and the aligned phrase pairs, and, where the aligner links words, its word
    links (`word_links`, which `tft-align --evaluate` scores). Register a subclass to align
    differently, and choose it with `tft-align --aligner`:

        @PhraseAligner.register("my_aligner")
        class MyAligner(PhraseAligner): ...

        allennlp tft-align pairs.tsv aligned.jsonl --include-package my_package \\
            --aligner '{"type": "my_aligner"}'

    Worker processes (`--workers`) build their own aligner from the same parameters, after
    importing the `--include-package` packages.
    """

    default_implementation = "tft_learned"

    def align(self, source: ParsedSentence, target: ParsedSentence) -> Dict:
        """The record of one pair: a batch of one (`align_batch`) unless overridden."""
        return self.align_batch([(source, target)])[0]

    def align_batch(self, pairs: Sequence[Tuple[ParsedSentence, ParsedSentence]]) -> List[Dict]:
        """
        The records of a batch of pairs, in order. `tft-align` calls this with each batch
        (`--batch-size`); override it to share work across the batch (one forward pass of an
        embedding model for all its sentences); by default it aligns pair by pair.
        """
        if type(self).align is PhraseAligner.align:
            raise NotImplementedError(
                f"{type(self).__name__} implements neither align nor align_batch"
            )
        return [self.align(source, target) for source, target in pairs]


def alignment_record(
    source: ParsedSentence,
    target: ParsedSentence,
    pairs: Sequence[PhrasePair],
    links: Set[Link],
) -> Dict:
    """The corpus record of a pair aligned by `pairs`, with the word `links` behind them."""
    return corpus_record(
        source.words,
        target.words,
        source.phrases,
        target.phrases,
        pairs,
        word_links=[list(link) for link in sorted(links)],
    )


# A rule as a config names it: its registered name, or its parameters with the name as "type".
RuleConfig = Union[str, Dict[str, Any]]
R = TypeVar("R", bound=Registrable)


def build_rule(base: Type[R], config: RuleConfig) -> R:
    """The rule of a kind (`base`: `LinkRule`, `PairRule`, ...) that `config` names, built as
    AllenNLP builds it from a config file; an aligner's default rules are built so."""
    params = {"type": config} if isinstance(config, str) else copy.deepcopy(config)
    return base.from_params(Params(params))


def build_rules(base: Type[R], configs: Sequence[RuleConfig]) -> List[R]:
    """`build_rule` for each of `configs`, in order."""
    return [build_rule(base, config) for config in configs]
