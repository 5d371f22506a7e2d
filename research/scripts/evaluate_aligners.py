"""
The first table of research/results/alignment_eval/README.md: each aligner against the MRPC
word-alignment gold and the project's own gold; writes research/results/alignment_eval/scores.json.
Run from the repository root, with GLUE_DIR holding MRPC's training file
(`$GLUE_DIR/MRPC/train.tsv`):

    python -m research.scripts.evaluate_aligners
    # the links between different words that only the earlier aligner's consistent pairs cover
    python -m research.scripts.evaluate_aligners --missed
"""

import json
import sys
from typing import Any, Dict, List, Tuple

from research.scripts.alignment_eval import EVALUATION, FIXTURE_GOLD, minilm, mrpc_train
from tft_allennlp.alignment.evaluation import (
    consistent,
    glue_pair_sentences,
    read_word_alignment_gold,
)
from tft_allennlp.alignment.pair_rules import ClosestInLength, SameContent
from tft_allennlp.alignment.phrase_aligners import (
    SyntacticBasicPhraseAligner,
    SyntacticPhraseAligner,
)
from tft_allennlp.alignment.pipeline import AlignmentPipeline, evaluate, evaluate_against_word_links

GOLD = str(EVALUATION / "mrpc_train_word_gold.jsonl")


def table_rows() -> List[Tuple[str, str, str, Dict[str, Any]]]:
    """The table's aligners: (name, word links, rules, parameters). Rules: "earlier" is
    `tft_syntactic_basic`, "content" `tft_syntactic` without its rule 5 (one span per region),
    "default" `tft_syntactic`, the default of the time."""
    # Similarity links as first evaluated (the threshold's default was 0.5 until it became 0.65).
    sim = {"embeddings": minilm(), "similarity_threshold": 0.5}
    wordnet = {"wordnet": "installed"}
    return [
        ("earlier aligner (rules 1-3, 6)", "lexical", "earlier", {}),
        ("+ content checks (rule 4)", "lexical", "content", {}),
        ("+ one span per region (rule 5): default", "lexical", "default", {}),
        ("earlier aligner", "+ MiniLM similarity >= 0.5", "earlier", sim),
        ("+ content checks", "+ MiniLM similarity >= 0.5", "content", sim),
        ("+ one span per region: default", "+ MiniLM similarity >= 0.5", "default", sim),
        ("default", "lexical + WordNet synonyms", "default", wordnet),
        ("default", "+ WordNet + MiniLM similarity >= 0.5", "default", {**wordnet, **sim}),
        (
            "default",
            "+ MiniLM similarity >= 0.5, layer 4",
            "default",
            {**sim, "embedding_layer": 4},
        ),
        ("default", "+ MiniLM similarity >= 0.65 (default)", "default", {"embeddings": minilm()}),
    ]


def rule_based(rules: str, **parameters: Any) -> SyntacticPhraseAligner:
    """The rule-based aligner with the `rules` of a row (see `table_rows`)."""
    if rules == "earlier":
        return SyntacticBasicPhraseAligner(**parameters)
    aligner = SyntacticPhraseAligner(**parameters)
    if rules == "content":
        aligner.pair_rules = [SameContent(), ClosestInLength()]
    return aligner


def main() -> None:
    rows = []
    for name, link_source, rules, parameters in table_rows():
        aligner = AlignmentPipeline("en_core_web_sm", rule_based(rules, **parameters))
        scores = evaluate_against_word_links(GOLD, aligner, mrpc_train())
        own = evaluate(str(FIXTURE_GOLD), aligner)
        row = {"method": name, "link_source": link_source, "rules": rules, "aligner": parameters}
        rows.append({**row, **scores})
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
    with open(EVALUATION / "scores.json", "w") as handle:
        json.dump(rows, handle, indent=1)


def missed() -> None:
    """Each sure link between different words that a consistent pair of the earlier aligner covers
    and no consistent pair of today's similarity default does, with the old aligner's tightest
    such pair."""
    old = AlignmentPipeline("en_core_web_sm", SyntacticBasicPhraseAligner())
    new = AlignmentPipeline("en_core_web_sm", SyntacticPhraseAligner(embeddings=minilm()))
    golds = read_word_alignment_gold(GOLD, glue_pair_sentences(mrpc_train()), old.split_words)
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
