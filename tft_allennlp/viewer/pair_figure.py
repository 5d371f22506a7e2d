"""
The figure of one pair on a page (`html_page.py`): its two sentences one above the other, a bar
under or over each phrase span (in tracks, so that overlapping spans do not overlap), a link per
phrase pair between their spans, the links a model missed, and the table of its phrase pairs;
and the escaping every part of the page uses. `page.js` places the bars and links from this
markup once the page is laid out.
"""

import html
import json
from typing import Any, Dict, Iterable, List, Sequence

from tft_allennlp.common.aligned_corpus import Span
from tft_allennlp.dataset_readers.aligned_paraphrases import IN_PARAPHRASE, PARAPHRASE
from tft_allennlp.viewer.pair_views import FigureView, LinkView

# Vertical room (pixels) for a track of span bars, and for the links between the two sentences.
TRACK_HEIGHT = 6
LINK_ZONE = 56
# Smaller type (page.css) for a figure whose longer sentence has more characters than these.
_SIZES = [("longest", 170), ("long", 110)]


def escape_text(value: Any) -> str:
    return html.escape(str(value), quote=False)


def escape_attribute(value: Any) -> str:
    return html.escape(str(value), quote=True)


def figure_markup(figure: FigureView, kind: str) -> str:
    source_tracks = _tracks(_spans(figure, 0))
    target_tracks = _tracks(_spans(figure, 1))
    source_depth = max(source_tracks.values(), default=-1) + 1
    target_depth = max(target_tracks.values(), default=-1) + 1
    gap = LINK_ZONE + TRACK_HEIGHT * (source_depth + target_depth)
    bars = [
        _bar("source", span, track, _bar_labels(figure, 0, span))
        for span, track in source_tracks.items()
    ] + [
        _bar("target", span, track, _bar_labels(figure, 1, span))
        for span, track in target_tracks.items()
    ]
    links = [_link(number, link) for number, link in enumerate(figure.links)]
    missed = [
        f'<g class="missed" data-source="{i} {i}" data-target="{j} {j}" data-kind="word">'
        '<path class="line"/></g>'
        for i, j in figure.missed_links
    ] + [
        f'<g class="missed" data-source="{_span(s)}" data-target="{_span(t)}" data-kind="phrase">'
        '<path class="line"/></g>'
        for s, t in figure.missed_pairs
    ]
    longest = max(len(" ".join(figure.source)), len(" ".join(figure.target)))
    size = next((name for name, length in _SIZES if longest > length), "")
    return (
        f'<div class="figure {kind} {size}" data-gap="{gap}">'
        '<div class="canvas">'
        f'<svg class="drawing" aria-hidden="true">{"".join(bars)}{"".join(missed)}'
        f"{''.join(links)}</svg>"
        + _sentence("source", figure.source)
        + f'<div class="gap" style="height:{gap}px"></div>'
        + _sentence("target", figure.target)
        + "</div></div>"
        + '<p class="info" aria-live="polite"></p>'
    )


def _sentence(side: str, words: Sequence[str]) -> str:
    spans = "".join(
        f'<span class="w" data-i="{i}">{escape_text(word)}</span>' for i, word in enumerate(words)
    )
    return f'<div class="sentence {side}" data-side="{side}">{spans}</div>'


def _spans(figure: FigureView, side: int) -> List[Span]:
    return list(dict.fromkeys((link.source, link.target)[side] for link in figure.links))


def _tracks(spans: Iterable[Span]) -> Dict[Span, int]:
    """
    A track (0 nearest the words) for each span: shorter spans nearer the words, each in the
    first track where it overlaps no span already there.
    """
    tracks: List[List[Span]] = []
    placed: Dict[Span, int] = {}
    for span in sorted(spans, key=lambda s: (s[1] - s[0], s[0])):
        for number, track in enumerate(tracks):
            if all(span[1] < other[0] or other[1] < span[0] for other in track):
                track.append(span)
                placed[span] = number
                break
        else:
            tracks.append([span])
            placed[span] = len(tracks) - 1
    return placed


def _bar_labels(figure: FigureView, side: int, span: Span) -> str:
    labels = {link.label for link in figure.links if (link.source, link.target)[side] == span}
    return " ".join(sorted(labels))


def _bar(side: str, span: Span, track: int, labels: str) -> str:
    only_negative = " negative-only" if labels == IN_PARAPHRASE else ""
    return (
        f'<path class="bar {side}{only_negative}" data-side="{side}" data-span="{_span(span)}" '
        f'data-track="{track}" data-labels="{labels}"/>'
    )


def _link(number: int, link: LinkView) -> str:
    classes = ["link", link.label, link.relation]
    attributes = {
        "data-k": number,
        "data-source": _span(link.source),
        "data-target": _span(link.target),
        "data-label": link.label,
        "data-relation": link.relation,
    }
    if link.gold is not None:
        attributes["data-gold"] = link.gold
        classes.append(link.gold)
    dot = ""
    if link.probabilities is not None:
        attributes["data-probabilities"] = json.dumps(link.probabilities, sort_keys=True)
        attributes["data-predicted"] = link.predicted
        agrees = link.predicted == link.label
        dot = (
            f'<circle class="dot{"" if agrees else " disagrees"}" '
            f'data-predicted="{escape_attribute(link.predicted)}" r="{3 if agrees else 4}"/>'
        )
    attributes["class"] = " ".join(classes)
    return f'<g {attribute_markup(attributes)}><path class="hit"/><path class="line"/>{dot}</g>'


def table_markup(figure: FigureView, has_model: bool) -> str:
    if not figure.links:
        return ""
    labels = sorted(
        {label for link in figure.links for label in (link.probabilities or {})},
        key=lambda label: (label != PARAPHRASE, label),
    )
    head = ["#", "source phrase", "target phrase", "corpus label", "words"]
    if has_model:
        head += [f"P({label.replace('_', '-')})" for label in labels] + ["model"]
    if any(link.gold is not None for link in figure.links):
        head.append("gold")
    rows = []
    for number, link in enumerate(figure.links):
        cells = [
            str(number + 1),
            escape_text(_phrase(figure.source, link.source)),
            escape_text(_phrase(figure.target, link.target)),
            escape_text(link.label),
            link.relation,
        ]
        if has_model:
            probabilities = link.probabilities or {}
            cells += [
                f"{probabilities[label]:.3f}" if label in probabilities else "–" for label in labels
            ]
            if link.predicted is None:
                cells.append("not seen")
            else:
                verdict = verdict_class(link.predicted == link.label)
                cells.append(f'<span class="{verdict}">{escape_text(link.predicted)}</span>')
        if "gold" in head:
            cells.append(f'<span class="{link.gold or ""}">{escape_text(link.gold or "")}</span>')
        rows.append(
            f'<tr data-k="{number}">' + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>"
        )
    header = "".join(f"<th>{escape_text(cell)}</th>" for cell in head)
    return (
        '<details class="numbers"><summary>Numbers of the phrase pairs</summary>'
        f"<table><thead><tr>{header}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        "</details>"
    )


def _phrase(words: Sequence[str], span: Span) -> str:
    return " ".join(words[span[0] : span[1] + 1])


def _span(span: Span) -> str:
    return f"{span[0]} {span[1]}"


def verdict_class(right: bool) -> str:
    return "right" if right else "not-right"


def attribute_markup(attributes: Dict[str, Any]) -> str:
    return " ".join(f'{name}="{escape_attribute(value)}"' for name, value in attributes.items())
