"""
`write_page`: the whole of `allennlp tft-show` but its command line. Reads the pairs to show,
labels their phrase pairs as the injection corpus does, scores them with an injection model and
marks them with gold (both optional), and writes the page.
"""

import os
import time
from typing import Any, Dict, List, Optional

from allennlp.common.util import JsonDict

from tft_allennlp.common.output_paths import drafted_file, locked_output_file
from tft_allennlp.viewer.corpus_labels import corpus_labels, reader_sampling
from tft_allennlp.viewer.gold_marks import Gold
from tft_allennlp.viewer.html_page import render_page
from tft_allennlp.viewer.model_scores import (
    load_injection_archive,
    phrase_pair_request,
    predict,
    reader_parameters,
)
from tft_allennlp.viewer.page_summary import page_summary
from tft_allennlp.viewer.pair_views import PairView, pair_view
from tft_allennlp.viewer.shown_pairs import check_readable, read_shown_pairs


def write_page(
    aligned: str,
    output: str,
    archive: Optional[str] = None,
    gold: Optional[str] = None,
    limit: int = 100,
    seed: Optional[int] = 0,
    force: bool = False,
    batch_size: int = 32,
) -> Dict[str, Any]:
    """
    Writes the page of `limit` pairs of the aligned corpus `aligned` to `output` and returns
    its summary (with `seconds`, the time it took). `seed` None shows the first pairs, else a
    sample drawn with it. With `archive` (an injection model.tar.gz) the pairs are scored by its
    `tft_phrase_pairs` predictor, `batch_size` at a time; with `gold`, marked against it
    (`tft_allennlp.viewer.gold_marks`).

    Every input is checked before anything is read at length, and `output` before any input
    (`tft_allennlp.common.output_paths`: an existing file is refused without `force`, an input
    never overwritten, a page another command is writing refused); the page is drafted beside
    `output` and renamed over it once written.
    Problems are `ConfigurationError`s or `MalformedInputError`s naming the file (and line).
    """
    started = time.perf_counter()
    # The page's lock is held from its checks to its rename: one command at a time writes it.
    with locked_output_file(output, force, [aligned, archive, gold]) as target:
        for path in (aligned, gold):
            if path is not None:
                check_readable(path)
        shown = read_shown_pairs(aligned, limit, seed)
        marks = Gold(gold) if gold is not None else None
        loaded = load_injection_archive(archive) if archive is not None else None
        sampling = reader_sampling(reader_parameters(loaded) if loaded is not None else None)
        labels = [corpus_labels(pair, shown.pairs, sampling) for pair in shown.pairs]
        outputs: List[Optional[List[JsonDict]]] = [None] * len(shown.pairs)
        if loaded is not None:
            requests, owners = [], []
            for position, (pair, labelled) in enumerate(zip(shown.pairs, labels)):
                phrase_pairs = [phrase_pair for phrase_pair, _ in labelled.phrase_pairs]
                requests.append(phrase_pair_request(pair.source, pair.target, phrase_pairs))
                owners.append(position)
                for random_pair in labelled.random_pairs:
                    random_phrase_pairs = [
                        phrase_pair for phrase_pair, _ in random_pair.phrase_pairs
                    ]
                    requests.append(
                        phrase_pair_request(
                            pair.source, random_pair.partner.target, random_phrase_pairs
                        )
                    )
                    owners.append(position)
            predicted = predict(loaded, requests, batch_size)
            grouped: List[List[JsonDict]] = [[] for _ in shown.pairs]
            for position, result in zip(owners, predicted):
                grouped[position].append(result)
            outputs = list(grouped)
        views: List[PairView] = [
            pair_view(
                index,
                pair,
                labelled,
                scored,
                marks.marks(pair) if marks is not None else None,
            )
            for index, (pair, labelled, scored) in enumerate(
                zip(shown.pairs, labels, outputs), start=1
            )
        ]
        summary = page_summary(
            views, shown.read, marks.scores(shown.pairs) if marks is not None else None
        )
        how = "the first" if seed is None else f"seed {seed}"
        sources = {"aligned pairs": f"{aligned} ({len(views)} shown, {how})"}
        if archive is not None:
            sources["model"] = archive
        if gold is not None:
            sources["gold"] = gold
        title = f"Aligned phrases of {os.path.basename(aligned)}"
        page = render_page(title, sources, summary, views)
        with drafted_file(target, output) as handle:
            handle.write(page)
    summary["seconds"] = round(time.perf_counter() - started, 1)
    return summary
