"""
How lowercased input changes the aligners: the same Quora pairs raw and lowercased (alignments
per pair, the share of non-identical ones, how many of the raw pairs' alignments the lowercased
pairs keep), and word-alignment gold as given and lowercased (MultiMWA's dev sets, which their
distributor lowercased already, and the project's cased MRPC word gold). Writes
`research/results/alignment_eval/lowercase.json` and prints the tables of
`research/results/alignment_eval/lowercase.md`. From the repository root:

    HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 python research/scripts/lowercase_effect.py
"""

import argparse
import csv
import json
import logging
import os
from typing import Dict, List

DATA = os.path.join("..", "shared", "data")
ALIGNERS = {
    "tft_learned (default)": {"type": "tft_learned"},
    "tft_syntactic": {"type": "tft_syntactic"},
}
GOLDS = {
    "MultiMWA MTRef dev": "alignment/mtref-dev.tsv",
    "MultiMWA Wiki dev": "alignment/wiki-dev.tsv",
    "MRPC train word gold (40 pairs)": "research/results/alignment_eval/mrpc_train_word_gold.jsonl",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=DATA)
    parser.add_argument("--pairs", type=int, default=None, help="the first N Quora pairs")
    parser.add_argument("--output", default="research/results/alignment_eval/lowercase.json")
    parser.add_argument("--aligners", nargs="+", default=list(ALIGNERS))
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    from tft_allennlp.alignment.evaluation import (
        WordAlignmentGold,
        evaluate_word_alignment,
        glue_pair_sentences,
        is_identical,
        read_multimwa,
        read_word_alignment_gold,
    )
    from tft_allennlp.alignment.pipeline import AlignmentPipeline, build_phrase_aligner

    pipeline = AlignmentPipeline("en_core_web_sm")
    quora_path = os.path.join(args.data, "paraphrase", "quora_duplicates.tsv")
    with open(quora_path, encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]
    rows = rows[: args.pairs] if args.pairs else rows
    texts = {
        "raw": [text for row in rows for text in row[:2]],
        "lowercased": [text.lower() for row in rows for text in row[:2]],
    }
    parsed = {case: pipeline.parse_text(sentences) for case, sentences in texts.items()}
    same_words = [
        [w.lower() for w in parsed["raw"][k].words] == parsed["lowercased"][k].words
        for k in range(len(parsed["raw"]))
    ]
    results: Dict = {"quora_pairs": len(rows), "quora": {}, "gold": {}}
    results["quora_sentences_split_alike"] = sum(same_words) / len(same_words)
    for name in args.aligners:
        aligner = build_phrase_aligner(ALIGNERS[name])
        alignments: Dict[str, List] = {}
        for case, sentences in parsed.items():
            pairs = [(sentences[2 * k], sentences[2 * k + 1]) for k in range(len(rows))]
            records = []
            for start in range(0, len(pairs), 64):
                records += aligner.align_batch(pairs[start : start + 64])
            alignments[case] = [
                {(tuple(s), tuple(t)) for s, t in record["alignments"]} for record in records
            ]
            total = sum(len(found) for found in alignments[case])
            # Identical: the same words on both sides, in any case.
            different = sum(
                not is_identical(pair, record["source"], record["target"])
                for record, found in zip(records, alignments[case])
                for pair in found
            )
            results["quora"][f"{name}, {case}"] = {
                "alignments per pair": total / len(rows),
                "non-identical per pair": different / len(rows),
                "non-identical share": different / total,
            }
        # Of the raw pairs' alignments, those the lowercased pairs give too (pairs split alike).
        alike = [k for k in range(len(rows)) if same_words[2 * k] and same_words[2 * k + 1]]
        raw = sum(len(alignments["raw"][k]) for k in alike)
        kept = sum(len(alignments["raw"][k] & alignments["lowercased"][k]) for k in alike)
        results["quora"][f"{name}, lowercased"]["raw alignments kept"] = kept / raw
        logging.info("%s: %s", name, results["quora"])

    mrpc = glue_pair_sentences(os.path.join(args.data, "glue", "MRPC", "train.tsv"))
    for gold_name, path in GOLDS.items():
        if path.endswith(".tsv"):
            golds = read_multimwa(os.path.join(args.data, path))
        else:
            golds = read_word_alignment_gold(path, mrpc, pipeline.split_words)
        lowered = [
            WordAlignmentGold(
                g.id,
                [w.lower() for w in g.source],
                [w.lower() for w in g.target],
                g.sure,
                g.possible,
            )
            for g in golds
        ]
        for name in args.aligners:
            aligner = build_phrase_aligner(ALIGNERS[name])
            for case, cased_golds in (("as given", golds), ("lowercased", lowered)):
                sentences = pipeline.parse_word_lists(
                    [w for g in cased_golds for w in (g.source, g.target)]
                )
                pairs = [(sentences[2 * k], sentences[2 * k + 1]) for k in range(len(golds))]
                records = []
                for start in range(0, len(pairs), 64):
                    records += aligner.align_batch(pairs[start : start + 64])
                scores = evaluate_word_alignment(
                    cased_golds,
                    [[(tuple(s), tuple(t)) for s, t in r["alignments"]] for r in records],
                    word_links=[{tuple(link) for link in r["word_links"]} for r in records],
                )
                results["gold"][f"{gold_name} | {name} | {case}"] = scores
                logging.info("%s %s %s: F1 %.3f", gold_name, name, case, scores["word_f1"])
    with open(args.output, "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=1)
        handle.write("\n")
    print(f"Quora, {len(rows)} pairs ({results['quora_sentences_split_alike']:.4f} of the")
    print("sentences split into the same words lowercased):\n")
    print(
        "| aligner, input | alignments per pair | non-identical per pair | non-identical share "
        "| raw alignments kept |\n|---|---|---|---|---|"
    )
    for name, values in results["quora"].items():
        kept = values.get("raw alignments kept")
        cells = [f"{values['alignments per pair']:.2f}", f"{values['non-identical per pair']:.2f}"]
        cells += [f"{values['non-identical share']:.3f}", "" if kept is None else f"{kept:.3f}"]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\n| gold | aligner | input | word F1 | non-identical P | non-identical coverage |")
    print("|---|---|---|---|---|---|")
    for key, scores in results["gold"].items():
        print(
            f"| {key} | {scores['word_f1']:.3f} | {scores['phrase_precision_non_identical']:.3f} "
            f"| {scores['phrase_recall_non_identical']:.3f} |"
        )


if __name__ == "__main__":
    main()
