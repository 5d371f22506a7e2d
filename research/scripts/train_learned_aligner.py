"""
Trains the learned aligner's scorer (`tft_learned`) on MultiMWA's training splits and writes
its parameters as one small JSON file. The shipped scorers were made from the repository root
with:

    HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 python research/scripts/train_learned_aligner.py \\
        --output tft_allennlp/alignment/scorers/lexical.json
    HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 python research/scripts/train_learned_aligner.py \\
        --groups lexical wordnet static contextual \\
        --output tft_allennlp/alignment/scorers/contextual.json

The procedure (and how thresholds are selected on a split of the training data, never on a
development set) is described in `tft_allennlp/alignment/scorer_training.py`.
"""

import argparse
import json
import logging
import os
import sys

DATA = os.path.join("..", "shared", "data", "alignment")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", required=True, help="the scorer file to write")
    parser.add_argument(
        "--groups",
        nargs="+",
        default=["lexical", "wordnet", "static"],
        help="link feature groups (lexical, wordnet, static, contextual)",
    )
    parser.add_argument(
        "--train",
        nargs="+",
        default=[f"mtref={DATA}/mtref-train.tsv", f"wiki={DATA}/wiki-train.tsv"],
        help="GENRE=FILE: MultiMWA training files",
    )
    parser.add_argument("--embeddings", default="installed", help="the embedding checkpoint")
    parser.add_argument("--contextual-layer", type=int, default=3)
    parser.add_argument("--target-precision", type=float, default=0.85)
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--spacy-model", default="en_core_web_sm")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    from tft_allennlp.alignment.link_features import LinkFeatures
    from tft_allennlp.alignment.pipeline import AlignmentPipeline
    from tft_allennlp.alignment.scorer_training import load_gold_pairs, train_scorer
    from tft_allennlp.alignment.word_embedder import (
        StaticWordVectors,
        WordEmbedder,
        checkpoint_directory,
    )
    from tft_allennlp.alignment.wordnet import load_wordnet

    files = dict(item.split("=", 1) for item in args.train)
    encoder = {}
    vectors = {}
    if "static" in args.groups or "contextual" in args.groups:
        encoder["embeddings"] = args.embeddings
        checkpoint = checkpoint_directory(args.embeddings)
        if "static" in args.groups:
            vectors["static"] = StaticWordVectors(checkpoint)
        if "contextual" in args.groups:
            encoder["layer"] = args.contextual_layer
            vectors["contextual"] = WordEmbedder(checkpoint, 32, args.contextual_layer)
    wordnet = load_wordnet("installed") if "wordnet" in args.groups else None
    features = LinkFeatures(args.groups, wordnet)
    pairs = load_gold_pairs(files, AlignmentPipeline(args.spacy_model), vectors)
    command = " ".join(["python", "research/scripts/train_learned_aligner.py"] + sys.argv[1:])
    provenance = {"command": command, "train": {g: os.path.basename(f) for g, f in files.items()}}
    scorer = train_scorer(
        features, pairs, encoder, args.target_precision, args.seed, provenance=provenance
    )
    with open(args.output, "w", encoding="utf-8") as handle:
        json.dump(scorer.as_json(), handle, indent=1)
        handle.write("\n")
    print(f"{args.output}: link threshold {scorer.link_threshold}, pair {scorer.pair_threshold}")


if __name__ == "__main__":
    main()
