"""
The figures at the top of a page (and on the terminal): how many pairs, alignments and
differing alignments it shows, how often an injection model agrees with the corpus labels,
and the aligner's precision and coverage against gold.
"""

import collections
from typing import Any, Dict, List, Optional, Sequence

from tft_allennlp.dataset_readers.aligned_paraphrases import IN_PARAPHRASE, PARAPHRASE, RANDOM
from tft_allennlp.viewer.gold_marks import WRONG
from tft_allennlp.viewer.pair_views import LinkView, PairView


def page_summary(
    views: Sequence[PairView],
    read: Optional[int] = None,
    gold_scores: Optional[Dict[str, float]] = None,
) -> Dict[str, Any]:
    """
    The summary of a page of `views`: `read` is how many pairs the file holds (None, left out:
    the first ones were shown and the rest not read), `gold_scores` the gold's scores over the
    pairs it holds (`Gold.scores`). Ratios are rounded to three decimals; a model's and the
    gold's figures appear only when the views hold them.
    """
    alignments = [link for view in views for link in view.alignments]
    differing = [link for link in alignments if not link.identical]
    negatives = [link for view in views for link in view.figure.links if link.label != PARAPHRASE]
    summary: Dict[str, Any] = {"pairs shown": len(views)}
    if read is not None:
        summary["pairs in the file"] = read
    summary.update(
        {
            "alignments per pair": _ratio(len(alignments), len(views), 2),
            "differing share": _ratio(len(differing), len(alignments)),
            "in-paraphrase negatives per pair": _ratio(
                sum(link.label == IN_PARAPHRASE for link in negatives), len(views), 2
            ),
        }
    )
    summary.update(_model_summary(views))
    if gold_scores is not None:
        with_gold = [view for view in views if view.gold is not None]
        summary.update(
            {
                "pairs with gold": len(with_gold),
                "gold precision": round(gold_scores["precision"], 3),
                "gold coverage": round(gold_scores["coverage"], 3),
            }
        )
        if "precision_differing" in gold_scores:
            summary["gold precision, differing"] = round(gold_scores["precision_differing"], 3)
            summary["gold coverage, differing"] = round(gold_scores["coverage_differing"], 3)
        summary["wrong alignments"] = sum(
            link.gold == WRONG for view in with_gold for link in view.alignments
        )
        summary["missed gold links"] = sum(
            len(view.figure.missed_links) + len(view.figure.missed_pairs) for view in with_gold
        )
    return summary


def _model_summary(views: Sequence[PairView]) -> Dict[str, Any]:
    """The model's agreement with the corpus labels, when the views hold its outputs."""
    sentences = [(view.sentence_probability, True) for view in views] + [
        (random_view.sentence_probability, False)
        for view in views
        for random_view in view.random_pairs
    ]
    links = [link for view in views for link in _all_links(view)]
    summary: Dict[str, Any] = {}
    judged = [(p, paraphrase) for p, paraphrase in sentences if p is not None]
    if judged:
        right = sum((p >= 0.5) == paraphrase for p, paraphrase in judged)
        summary["sentence head accuracy"] = _ratio(right, len(judged))
    scored = [link for link in links if link.predicted is not None]
    if scored:
        summary["phrase head accuracy"] = _ratio(
            sum(link.predicted == link.label for link in scored), len(scored)
        )
        by_label: Dict[str, List[bool]] = collections.defaultdict(list)
        for link in scored:
            by_label[link.label].append(link.predicted == link.label)
            if link.label == PARAPHRASE:
                by_label[f"{PARAPHRASE}, {link.relation}"].append(link.predicted == link.label)
        for label in (
            PARAPHRASE,
            f"{PARAPHRASE}, identical",
            f"{PARAPHRASE}, differing",
            IN_PARAPHRASE,
            RANDOM,
        ):
            if by_label[label]:
                right = sum(by_label[label])
                summary[f"phrase head accuracy, {label}"] = _ratio(right, len(by_label[label]))
        unseen = sum(link.predicted is None for link in links)
        if unseen:
            summary["phrase pairs the model could not see"] = unseen
    return summary


def _all_links(view: PairView) -> List[LinkView]:
    links = list(view.figure.links)
    for random_view in view.random_pairs:
        links.extend(random_view.figure.links)
    return links


def _ratio(numerator: float, denominator: float, digits: int = 3) -> float:
    return round(numerator / denominator, digits) if denominator else 0.0
