"""
The HTML of a page: one self-contained file (its CSS and script inline, nothing fetched when it
is opened, from disk or anywhere) that shows each pair's two sentences one above the other and
a link per phrase pair between their spans (`pair_figure.py`).

The markup holds everything a reader or a test needs: a `section.pair` per pair
(`data-line`, `data-sentence-probability`, `data-precision`, `data-coverage`), and per phrase
pair a `g.link` (`data-source` and `data-target` spans as `start end`, inclusive word indices;
`data-label`, `data-relation`, `data-gold`, `data-predicted`, and `data-probabilities` as
JSON), with a `path.bar` per phrase span. The script (`page.js`) only places them: it measures
the words once the page is laid out and draws the bars under or over their words, in tracks
so that overlapping spans do not overlap, and the links between them; it adds the hover and
keyboard behaviour. Opened with `#self-check` in its address, the page checks its own
drawing and writes the result into `body[data-self-check]` (the browser test reads it).
"""

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from tft_allennlp.dataset_readers.aligned_paraphrases import IN_PARAPHRASE, RANDOM
from tft_allennlp.viewer.gold_marks import WRONG
from tft_allennlp.viewer.pair_figure import (
    attribute_markup,
    escape_attribute,
    escape_text,
    figure_markup,
    table_markup,
    verdict_class,
)
from tft_allennlp.viewer.pair_views import PairView, RandomView

_HERE = os.path.dirname(os.path.abspath(__file__))


def render_page(
    title: str, sources: Dict[str, str], summary: Dict[str, Any], views: Sequence[PairView]
) -> str:
    """
    The page: `title`, what it was made from (`sources`: "aligned pairs", "model", "gold" ->
    path or description), the `summary` figures, then each of `views`.
    """
    has_model = any(view.sentence_probability is not None for view in views) or any(
        link.probabilities is not None for view in views for link in view.figure.links
    )
    has_gold = any(view.gold is not None for view in views)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape_text(title)}</title>",
        f"<style>\n{_static('page.css')}</style>",
        # Registered before the page's script runs, so that its errors are recorded too.
        "<script>window.tftErrors = []; window.addEventListener('error', function (e) "
        "{ window.tftErrors.push(String(e.message)); });</script>",
        "</head>",
        f'<body class="no-negatives" data-model="{int(has_model)}" data-gold="{int(has_gold)}">',
        _header(title, sources, summary, has_model, has_gold),
        '<main id="pairs">',
        *(_pair(view, has_model, has_gold) for view in views),
        "</main>",
        f"<script>\n{_static('page.js')}</script>",
        "</body>",
        "</html>",
    ]
    return "\n".join(parts) + "\n"


def _static(name: str) -> str:
    with open(os.path.join(_HERE, name), encoding="utf-8") as handle:
        return handle.read()


def _header(
    title: str, sources: Dict[str, str], summary: Dict[str, Any], has_model: bool, has_gold: bool
) -> str:
    made_from = " · ".join(
        f"{escape_text(what)}: <code>{escape_text(where)}</code>" for what, where in sources.items()
    )
    groups = []
    for group, cells in _summary_groups(summary):
        figures = "".join(
            f'<div class="figure-cell" data-key="{escape_attribute(key)}">'
            f"<dt>{escape_text(label)}</dt>"
            f"<dd>{escape_text(value)}</dd></div>"
            for key, label, value in cells
        )
        groups.append(f'<div class="group"><h3>{escape_text(group)}</h3><dl>{figures}</dl></div>')
    legend = [
        _legend_item("identical", "alignment, the same words"),
        _legend_item("differing", "alignment, different words"),
        _legend_item(IN_PARAPHRASE, "in-paraphrase negative (key i)"),
        _legend_item(RANDOM, "random phrase pair (of a random pair)"),
    ]
    if has_gold:
        legend.append(_legend_item("wrong", "wrong by the gold"))
        legend.append(_legend_item("missed", "missed gold link"))
    if has_model:
        legend.append(
            '<span class="legend-item"><svg width="14" height="14" aria-hidden="true">'
            '<circle cx="7" cy="7" r="4" class="dot disagrees" data-predicted="in_paraphrase"/>'
            "</svg> the model's label, ringed where it is not the corpus label "
            '(<span class="swatch paraphrase">paraphrase</span> '
            '<span class="swatch in_paraphrase">in-paraphrase</span> '
            '<span class="swatch random">random</span>)</span>'
        )
    filters = [("all", "all pairs"), ("differing", "with differing alignments")]
    if has_gold:
        filters.append(("errors", "with wrong or missed links"))
    if has_model:
        filters.append(("disagrees", "where the model disagrees"))
    options = "".join(
        f'<option value="{key}">{escape_text(text)}</option>' for key, text in filters
    )
    return (
        '<header id="top">'
        f"<h1>{escape_text(title)}</h1>"
        f'<p class="made-from">{made_from}</p>'
        f'<div class="summary">{"".join(groups)}</div>'
        f'<p class="legend">{"".join(legend)}</p>'
        '<p class="controls">'
        f'<label>Show <select id="filter">{options}</select></label> '
        '<label><input type="checkbox" id="negatives"> in-paraphrase negatives</label> '
        '<label><input type="checkbox" id="tables"> numbers tables</label> '
        '<span class="keys">point at a link, bar or word (click keeps it) · '
        "<kbd>j</kbd> <kbd>k</kbd> next, previous pair · <kbd>l</kbd> <kbd>h</kbd> next, "
        "previous link · <kbd>i</kbd> negatives · <kbd>t</kbd> tables · <kbd>r</kbd> random "
        "pairs · <kbd>Esc</kbd> clear</span>"
        '<span id="shown-count"></span>'
        "</p>"
        "</header>"
    )


# The summary's figures by group: the group's name, and the start of the keys in it, which the
# page leaves out of their labels.
_GROUPS = [
    ("sentence head", "sentence head ", "sentence head accuracy"),
    ("phrase head accuracy", "phrase head accuracy, ", "phrase head accuracy"),
    ("phrase head accuracy", "", "phrase pairs the model"),
    ("gold", "gold ", "gold "),
    ("gold", "", "pairs with gold"),
    ("gold", "", "wrong alignments"),
    ("gold", "", "missed gold links"),
]


def _summary_groups(summary: Dict[str, Any]) -> List[Tuple[str, List[Tuple[str, str, Any]]]]:
    """The figures of `summary` as `(group, [(key, label, value)])`, the corpus's first."""
    groups: Dict[str, List[Tuple[str, str, Any]]] = {"pairs": []}
    for key, value in summary.items():
        group, label = "pairs", key
        for name, prefix, start in _GROUPS:
            if key.startswith(start):
                group, label = name, key[len(prefix) :] if key.startswith(prefix) else key
                if key == "phrase head accuracy":
                    label = "all"
                break
        label = label.replace("in_paraphrase", "in-paraphrase")
        groups.setdefault(group, []).append((key, label, value))
    return list(groups.items())


def _legend_item(kind: str, text: str) -> str:
    return (
        f'<span class="legend-item"><svg width="30" height="10" aria-hidden="true">'
        f'<path d="M2 5 H28" class="line sample-{kind}"/></svg> {escape_text(text)}</span>'
    )


def _pair(view: PairView, has_model: bool, has_gold: bool) -> str:
    alignments = view.alignments
    differing = sum(not link.identical for link in alignments)
    flags = {
        "differing": differing > 0,
        "errors": view.gold is not None
        and (
            WRONG in view.gold.verdicts
            or bool(view.figure.missed_links)
            or bool(view.figure.missed_pairs)
        ),
        "disagrees": _disagrees(view),
    }
    attributes = {
        "id": f"pair-{view.number}",
        "class": "pair",
        "tabindex": "-1",
        "data-number": view.number,
        "data-line": view.line_number,
        **{f"data-{flag}": int(value) for flag, value in flags.items()},
    }
    facts = [
        f"{len(alignments)} alignment{'s' if len(alignments) != 1 else ''}",
        f"{differing} differing",
    ]
    if view.sentence_probability is not None:
        attributes["data-sentence-probability"] = repr(view.sentence_probability)
        facts.append(_sentence_fact(view.sentence_probability, paraphrase=True))
    scored = [link for link in view.figure.links if link.predicted is not None]
    if scored:
        right = sum(link.predicted == link.label for link in scored)
        facts.append(f"phrase head: {right} of {len(scored)} right")
    if view.gold is not None:
        attributes["data-precision"] = repr(view.gold.scores["precision"])
        attributes["data-coverage"] = repr(view.gold.scores["coverage"])
        wrong = view.gold.verdicts.count(WRONG)
        missed = len(view.figure.missed_links) + len(view.figure.missed_pairs)
        attributes["data-gold-id"] = view.gold.gold_id
        facts.append(
            f"gold: precision <b>{view.gold.scores['precision']:.2f}"
            f"</b>, coverage <b>{view.gold.scores['coverage']:.2f}</b> "
            f'(<span class="wrong-count">{wrong} wrong</span>, '
            f'<span class="missed-count">{missed} missed</span>)'
        )
    elif has_gold:
        facts.append("no gold for this pair")
    random_parts = [
        _random_pair(random_view, position)
        for position, random_view in enumerate(view.random_pairs, start=1)
    ]
    return (
        f"<section {attribute_markup(attributes)}>"
        f'<h2><a href="#pair-{view.number}">#{view.number}</a> <span class="line">line '
        f"{view.line_number}</span> "
        f'<span class="facts">{" · ".join(facts)}</span></h2>'
        + figure_markup(view.figure, "pair")
        + table_markup(view.figure, has_model)
        + "".join(random_parts)
        + "</section>"
    )


def _sentence_fact(probability: float, paraphrase: bool) -> str:
    """The sentence head's probability, marked right when it is on the side of the label."""
    verdict = verdict_class((probability >= 0.5) == paraphrase)
    return f'sentence head: P(paraphrase) <b class="{verdict}">{probability:.2f}</b>'


def _disagrees(view: PairView) -> bool:
    """Whether the model's sentence or phrase labels differ from the corpus's anywhere."""
    links = list(view.figure.links)
    sentences: List[Tuple[Optional[float], bool]] = [(view.sentence_probability, True)]
    for random_view in view.random_pairs:
        links.extend(random_view.figure.links)
        sentences.append((random_view.sentence_probability, False))
    return any(
        link.predicted is not None and link.predicted != link.label for link in links
    ) or any(p is not None and (p >= 0.5) != paraphrase for p, paraphrase in sentences)


def _random_pair(view: RandomView, position: int) -> str:
    facts = [f"the source with the target of line {view.partner_line}"]
    if view.sentence_probability is not None:
        facts.append(_sentence_fact(view.sentence_probability, paraphrase=False))
    probability = (
        f' data-sentence-probability="{repr(view.sentence_probability)}"'
        if view.sentence_probability is not None
        else ""
    )
    return (
        f'<details class="random-pair" data-partner-line="{view.partner_line}"{probability}>'
        f"<summary>Random pair {position}: {' · '.join(facts)}</summary>"
        + figure_markup(view.figure, "random")
        + table_markup(
            view.figure,
            view.sentence_probability is not None
            or any(link.probabilities is not None for link in view.figure.links),
        )
        + "</details>"
    )
