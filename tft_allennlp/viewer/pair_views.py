"""
What a page shows of one sentence pair, assembled from the corpus line, the corpus labels of
its phrase pairs, an injection model's outputs and the gold's verdicts (each optional but the
line): the pair's figure (two sentences and a link per phrase pair), and the figures of its
random sentence pairs.
"""

from typing import Dict, List, NamedTuple, Optional, Sequence

from allennlp.common.util import JsonDict

from tft_allennlp.alignment.evaluation import Link, is_identical
from tft_allennlp.common.aligned_corpus import AlignedPair, PhrasePair, Span
from tft_allennlp.dataset_readers.aligned_paraphrases import PARAPHRASE
from tft_allennlp.viewer.corpus_labels import CorpusLabels, LabelledPair
from tft_allennlp.viewer.gold_marks import PairMarks


class LinkView(NamedTuple):
    """One phrase pair of a figure."""

    source: Span
    target: Span
    label: str
    """The corpus label: `paraphrase` (an alignment), `in_paraphrase` or `random`."""
    identical: bool
    """Whether both phrases hold the same words (ignoring case)."""
    gold: Optional[str] = None
    """`correct` or `wrong` (an alignment, with gold), else None."""
    probabilities: Optional[Dict[str, float]] = None
    """The phrase head's probability of each label (with a model; None for a pair it could
    not see: cut off by truncation, or of words without wordpieces)."""
    predicted: Optional[str] = None
    """The phrase head's label."""

    @property
    def relation(self) -> str:
        return "identical" if self.identical else "differing"


class FigureView(NamedTuple):
    """Two sentences, one above the other, and the links between their phrases."""

    source: List[str]
    target: List[str]
    links: List[LinkView]
    missed_links: List[Link] = []
    """Sure gold word links that no correct alignment covers."""
    missed_pairs: List[PhrasePair] = []
    """Gold phrase pairs that were not aligned."""


class RandomView(NamedTuple):
    """A random sentence pair of the corpus: the source with another pair's target."""

    partner_line: int
    figure: FigureView
    sentence_probability: Optional[float] = None


class PairView(NamedTuple):
    number: int
    """The pair's place on the page, from 1."""
    line_number: int
    figure: FigureView
    random_pairs: List[RandomView]
    sentence_probability: Optional[float] = None
    """The sentence head's probability that the pair is a paraphrase (with a model)."""
    gold: Optional[PairMarks] = None
    """The gold's verdicts (with gold that holds the pair)."""

    @property
    def alignments(self) -> List[LinkView]:
        return [link for link in self.figure.links if link.label == PARAPHRASE]


def pair_view(
    number: int,
    pair: AlignedPair,
    labels: CorpusLabels,
    outputs: Optional[Sequence[JsonDict]] = None,
    marks: Optional[PairMarks] = None,
) -> PairView:
    """
    The view of `pair`, the `number`-th on its page. `outputs`, with a model, are the
    `tft_phrase_pairs` predictor's outputs for the pair and then each random pair, their phrase
    pairs those of `labels` in order.
    """
    verdicts = iter(marks.verdicts) if marks is not None else None
    links = _links(pair.source, pair.target, labels.phrase_pairs, outputs[0] if outputs else None)
    if verdicts is not None:
        links = [
            link._replace(gold=next(verdicts)) if link.label == PARAPHRASE else link
            for link in links
        ]
    figure = FigureView(
        pair.source,
        pair.target,
        links,
        marks.missed_links if marks is not None else [],
        marks.missed_pairs if marks is not None else [],
    )
    random_views = []
    for position, random_pair in enumerate(labels.random_pairs, start=1):
        output = outputs[position] if outputs else None
        target = random_pair.partner.target
        random_links = _links(pair.source, target, random_pair.phrase_pairs, output)
        random_views.append(
            RandomView(
                random_pair.partner.line_number,
                FigureView(pair.source, target, random_links),
                _sentence_probability(output),
            )
        )
    return PairView(
        number,
        pair.line_number,
        figure,
        random_views,
        _sentence_probability(outputs[0] if outputs else None),
        marks,
    )


def _links(
    source: List[str],
    target: List[str],
    labelled: Sequence[LabelledPair],
    output: Optional[JsonDict],
) -> List[LinkView]:
    scored = output.get("phrase_pairs") if output is not None else None
    links = []
    for position, ((source_span, target_span), label) in enumerate(labelled):
        link = LinkView(
            source_span,
            target_span,
            label,
            is_identical((source_span, target_span), source, target),
        )
        if scored is not None:
            result = scored[position]
            assert (tuple(result["source_span"]), tuple(result["target_span"])) == (
                tuple(source_span),
                tuple(target_span),
            ), "the predictor's phrase pairs come back in the order asked for"
            link = link._replace(probabilities=result["probabilities"], predicted=result["label"])
        links.append(link)
    return links


def _sentence_probability(output: Optional[JsonDict]) -> Optional[float]:
    if output is None:
        return None
    value = output.get("paraphrase_probability")
    return None if value is None else float(value)
