"""
The aligners on MultiMWA's development sets (MTRef dev, Wiki dev), scored as `allennlp tft-align
--evaluate` scores them, and what each change from the rule-based aligner to the learned one did.
Writes `research/results/alignment_eval/multimwa_dev.json` and prints the tables of
`research/results/alignment_eval/multimwa_dev.md`. From the repository root:

    HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 python research/scripts/multimwa_dev_tables.py

The steps between the rule-based aligner and the shipped learned scorers use a scorer trained here
exactly as `research/scripts/train_learned_aligner.py` trains one (the same split of the training
data and the same selection), with the lexical and WordNet features only.
"""

import argparse
import json
import logging
import os
from typing import Dict, List

DATA = os.path.join("..", "shared", "data", "alignment")
DEV = {"MTRef": "mtref-dev.tsv", "Wiki": "wiki-dev.tsv"}
TRAIN = {"mtref": "mtref-train.tsv", "wiki": "wiki-train.tsv"}
COLUMNS = [
    ("word_precision", "word P"),
    ("word_recall", "word R"),
    ("word_f1", "word F1"),
    ("word_aer", "AER"),
    ("phrase_precision_identical", "identical P"),
    ("phrase_recall_identical", "identical coverage"),
    ("phrase_precision_non_identical", "non-identical P"),
    ("phrase_recall_non_identical", "non-identical coverage"),
    ("non_identical", "non-identical pairs"),
]
# The registered aligners compared, as `tft-align --aligner` gives them.
ALIGNERS = {
    "tft_syntactic (rules; the default before)": {"type": "tft_syntactic"},
    "tft_syntactic + MiniLM similarity": {"type": "tft_syntactic", "embeddings": "MINILM"},
    "tft_syntactic_basic (the rules before their content checks)": {"type": "tft_syntactic_basic"},
    "tft_mutual_argmax (SimAlign-style baseline, MiniLM layer 3)": {"type": "tft_mutual_argmax"},
    "tft_learned, lexical scorer (the new default)": {"type": "tft_learned"},
    "tft_learned, contextual scorer": {"type": "tft_learned", "scorer": "contextual"},
}


def row(name: str, scores: Dict[str, float]) -> str:
    cells = [name] + [
        f"{scores[key]:.0f}" if key == "non_identical" else f"{scores[key]:.3f}"
        for key, _ in COLUMNS
    ]
    return "| " + " | ".join(cells) + " |"


def table(genre: str, results: Dict[str, Dict[str, Dict[str, float]]], names: List[str]) -> str:
    lines = [f"{genre} dev:", "", "| aligner | " + " | ".join(label for _, label in COLUMNS) + " |"]
    lines.append("|" + "---|" * (len(COLUMNS) + 1))
    lines += [row(name, results[name][genre]) for name in names]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=DATA, help="the folder of MultiMWA's files")
    parser.add_argument("--output", default="research/results/alignment_eval/multimwa_dev.json")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    from tft_allennlp.alignment.evaluation import evaluate_word_alignment
    from tft_allennlp.alignment.learned_scorer import LearnedScorer
    from tft_allennlp.alignment.link_features import LinkFeatures
    from tft_allennlp.alignment.pair_rules import (
        ClosestInLength,
        SameContent,
        TightestSpans,
        phrase_pairs,
    )
    from tft_allennlp.alignment.pipeline import AlignmentPipeline, build_phrase_aligner
    from tft_allennlp.alignment.scorer_training import (
        candidates,
        link_scores,
        load_gold_pairs,
        train_scorer,
    )
    from tft_allennlp.alignment.word_embedder import checkpoint_directory
    from tft_allennlp.alignment.wordnet import load_wordnet

    pipeline = AlignmentPipeline("en_core_web_sm")
    dev = {
        genre: load_gold_pairs({genre: os.path.join(args.data, name)}, pipeline)
        for genre, name in DEV.items()
    }
    results: Dict[str, Dict[str, Dict[str, float]]] = {}

    def score(genre: str, predictions: List, links: List) -> Dict[str, float]:
        return evaluate_word_alignment([p.gold for p in dev[genre]], predictions, word_links=links)

    for name, parameters in ALIGNERS.items():
        if parameters.get("embeddings") == "MINILM":
            parameters = {**parameters, "embeddings": checkpoint_directory("installed")}
        aligner = build_phrase_aligner(parameters)
        results[name] = {}
        for genre, pairs in dev.items():
            records = aligner.align_batch([(p.source, p.target) for p in pairs])
            predictions = [[(tuple(s), tuple(t)) for s, t in r["alignments"]] for r in records]
            links = [{tuple(link) for link in r["word_links"]} for r in records]
            results[name][genre] = score(genre, predictions, links)
        logging.info("%s: %s", name, results[name])

    # The steps: a scorer with lexical and WordNet features only, trained as the shipped ones.
    features = LinkFeatures(["lexical", "wordnet"], load_wordnet("installed"))
    train = load_gold_pairs(
        {genre: os.path.join(args.data, name) for genre, name in TRAIN.items()}, pipeline
    )
    scorer: LearnedScorer = train_scorer(features, train, {})
    checked = [SameContent(), TightestSpans(), ClosestInLength()]
    steps = {
        "learned links, first round only; pairs by the rules of tft_syntactic": "first",
        "+ second round (neighbours' and heads' scores)": "second",
        "+ pairs without the content check (consistent, tightest, closest)": "no_check",
        "+ pair scorer (tft_learned with lexical and WordNet features)": "pair_scorer",
    }
    for name, step in steps.items():
        results[name] = {}
        for genre, pairs in dev.items():
            predictions, links = [], []
            for pair in pairs:
                if step == "first":
                    row_features = features.first_round(pair.source, pair.target)
                    scores = scorer.first_round.probabilities(row_features)
                else:
                    scores = link_scores(features, scorer.first_round, scorer.second_round, pair)
                found = candidates(pair, scores, scorer.link_threshold)
                if step in ("first", "second"):
                    kept = phrase_pairs(pair.source, pair.target, found.links, checked)
                elif step == "no_check":
                    kept = found.pairs
                else:
                    values = scorer.pair_model.probabilities(found.features)
                    kept = [p for p, v in zip(found.pairs, values) if v >= scorer.pair_threshold]
                predictions.append(kept)
                links.append(found.links)
            results[name][genre] = score(genre, predictions, links)
        logging.info("%s: %s", name, results[name])
    results["thresholds of the lexical and WordNet scorer"] = {
        "link": scorer.link_threshold,  # type: ignore[dict-item]
        "pair": scorer.pair_threshold,  # type: ignore[dict-item]
    }
    with open(args.output, "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=1)
        handle.write("\n")
    for genre in DEV:
        print(table(genre, results, list(ALIGNERS)) + "\n")
    for genre in DEV:
        names = [list(ALIGNERS)[0]] + list(steps) + list(ALIGNERS)[-2:]
        print(table(genre, results, names) + "\n")


if __name__ == "__main__":
    main()
