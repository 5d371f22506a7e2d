"""
The held-out blind judgement of research/results/alignment_eval/README.md. Run from the repository
root, with GLUE_DIR holding MRPC's training file (`$GLUE_DIR/MRPC/train.tsv`):

    # the items shown to the judge (sentences + one proposed pair each) and the key to them
    python -m research.scripts.judged_precision --make-items DIR [--sample 2]
    # the table, from the committed judgements
    python -m research.scripts.judged_precision [--sample 2]
    # several samples pooled (the held-out table of the README)
    python -m research.scripts.judged_precision --pool 3,4,5,6,8
    # the earlier aligner's correct regions that today's aligners miss
    python -m research.scripts.judged_precision --regions 3,4,5,6
    # agreement of two annotators of one sample
    python -m research.scripts.judged_precision --sample 3 \
        --agreement research/results/alignment_eval/mrpc_train_judgements_heldout3_second.jsonl

Sample 1: 40 MRPC training paraphrases (label 1) drawn with `random.Random(2611)` from those
not used by the first two checks (the ids of mrpc_train_word_gold.jsonl and
mrpc_train_judgements.jsonl). Sample 2: 40 more, drawn with `random.Random(2612)` from those not
used by sample 1 either, after the similarity-kinds rule had been set on sample 1. Each
aligner's non-identical pairs on a sample, pooled, shuffled with `random.Random(7)`, were judged
by an annotator who saw only GUIDELINE_phrase_pairs.md and the items
(mrpc_train_judgements_heldout[2].jsonl holds ids, spans and labels). Samples 3-5 were drawn the
same way (`random.Random(2613)` to `random.Random(2615)`) from the pairs that no earlier file
holds, and so were samples 6-8 (`random.Random(2616)` to `random.Random(2618)`). Pairs that an
aligner added to a sample after it was judged are judged the same way and
kept in mrpc_train_judgements_added.jsonl (`--item-prefix M` names their items).
"""

import argparse
import csv
import json
import math
import os
import random
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from research.scripts.alignment_eval import EVALUATION, minilm, mrpc_train

HERE = str(EVALUATION)
# Sample -> (seed, judgements file); each sample leaves out the ids of the files before it.
SAMPLES = {
    1: (2611, f"{HERE}/mrpc_train_judgements_heldout.jsonl"),
    2: (2612, f"{HERE}/mrpc_train_judgements_heldout2.jsonl"),
    3: (2613, f"{HERE}/mrpc_train_judgements_heldout3.jsonl"),
    4: (2614, f"{HERE}/mrpc_train_judgements_heldout4.jsonl"),
    5: (2615, f"{HERE}/mrpc_train_judgements_heldout5.jsonl"),
    6: (2616, f"{HERE}/mrpc_train_judgements_heldout6.jsonl"),
    7: (2617, f"{HERE}/mrpc_train_judgements_heldout7.jsonl"),
    8: (2618, f"{HERE}/mrpc_train_judgements_heldout8.jsonl"),
}
# Judgements of pairs that an aligner added after its sample had been judged (each line names its
# sample). They are kept apart because a sample's file also decides which ids later samples
# leave out, and those draws must not change.
ADDED = f"{HERE}/mrpc_train_judgements_added.jsonl"
EARLIER = [f"{HERE}/mrpc_train_word_gold.jsonl", f"{HERE}/mrpc_train_judgements.jsonl"]


def method_parameters(method: str) -> Dict[str, Any]:
    """The `--aligner` parameters of each judged aligner: the earlier one is
    `tft_syntactic_basic`, the others `tft_syntactic` (the default of the time)."""
    if method == "old":
        return {"type": "tft_syntactic_basic"}
    return {
        "type": "tft_syntactic",
        **{
            "new": {},
            "new_wordnet": {"wordnet": "installed"},
            # The threshold's default was 0.5 until these judgements made it 0.65.
            "new_emb": {"embeddings": minilm(), "similarity_threshold": 0.5},
            "new_emb_layer4": {
                "embeddings": minilm(),
                "similarity_threshold": 0.5,
                "embedding_layer": 4,
            },
            "new_emb_065": {"embeddings": minilm()},
        }[method],
    }


NAMES = {
    "old": "earlier aligner, lexical",
    "new": "default, lexical",
    "new_wordnet": "default, lexical + WordNet synonyms",
    "new_emb": "default, + MiniLM similarity >= 0.5",
    "new_emb_layer4": "default, + MiniLM similarity >= 0.5, layer 4",
    "new_emb_065": "default, + MiniLM similarity >= 0.65 (default)",
}


def proposals(
    sample: int, methods: Sequence[str] = tuple(NAMES)
) -> Tuple[Dict[Tuple, Set[str]], Dict[str, Tuple[List[str], List[str]]], Dict[str, int]]:
    """(pair id, source span, target span) -> the aligners of `methods` proposing it, over the
    non-identical pairs of the sample's 40 sentence pairs; each sentence pair's words; and each
    aligner's number of identical pairs (the same words on both sides), which are not judged."""
    from tft_allennlp.alignment.evaluation import glue_pair_sentences, is_identical
    from tft_allennlp.alignment.pipeline import build_pipeline

    seed, _ = SAMPLES[sample]
    used: Set[str] = set()
    for name in EARLIER + [SAMPLES[earlier][1] for earlier in SAMPLES if earlier < sample]:
        used |= {json.loads(line)["id"] for line in open(name)}
    sentences = glue_pair_sentences(mrpc_train())
    with open(mrpc_train(), encoding="utf-8-sig", newline="") as handle:
        rows = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        paraphrases = {f"{r['#1 ID']}_{r['#2 ID']}" for r in rows if r["Quality"] == "1"}
    ids = random.Random(seed).sample(sorted(paraphrases - used), 40)
    aligners = {m: build_pipeline("en_core_web_sm", method_parameters(m)) for m in methods}
    proposed: Dict[Tuple, Set[str]] = {}
    words = {}
    identical = {method: 0 for method in methods}
    for pair_id in ids:
        # spaCy's parse, the same for every aligner
        source, target = aligners[methods[0]].parse_text(list(sentences[pair_id]))
        words[pair_id] = (source.words, target.words)
        for method, aligner in aligners.items():
            for s, t in aligner.align(source, target)["alignments"]:
                if is_identical((tuple(s), tuple(t)), source.words, target.words):
                    identical[method] += 1
                else:
                    proposed.setdefault((pair_id, tuple(s), tuple(t)), set()).add(method)
    return proposed, words, identical


def judged(sample: int, path: Optional[str] = None) -> Dict[Tuple, str]:
    """The sample's judgements, with those added later (`path`: another annotator's judgements
    of the same items, alone)."""
    items = []
    for name in [path] if path else [SAMPLES[sample][1], ADDED]:
        if os.path.exists(name):
            with open(name) as handle:
                items += [json.loads(line) for line in handle]
    items = [item for item in items if item.get("sample", sample) == sample]
    return {
        (i["id"], tuple(i["source_span"]), tuple(i["target_span"])): i["judgement"] for i in items
    }


def make_items(directory: str, sample: int, prefix: str = "K") -> None:
    """The proposed pairs not judged yet, as shown to the judge, and the key to them; items are
    named `prefix` and a number (a new letter for items added to a judged sample)."""
    proposed, words, _ = proposals(sample)
    keys = sorted(set(proposed) - set(judged(sample)))
    random.Random(7).shuffle(keys)
    shown, key = [], []
    for number, (pair_id, s, t) in enumerate(keys, 1):
        (source, target), item = words[pair_id], f"{prefix}{number:03d}"

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


def table(sample: int, path: Optional[str] = None) -> None:
    proposed, _, identical = proposals(sample)
    labels = judged(sample, path)
    # An aligner added after a file was judged has pairs that file lacks: it is left out.
    complete = {
        method: all(key in labels for key, methods in proposed.items() if method in methods)
        for method in NAMES
    }
    if not any(complete.values()):
        raise SystemExit("proposed pairs are not judged: run --make-items")
    correct_anywhere = sum(labels.get(key) == "correct" for key in proposed)
    print(
        "| aligner | judged pairs | correct | partial | wrong | correct, 95% interval "
        f"| correct pairs found (of {correct_anywhere}) | identical pairs | overall precision |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for method, name in NAMES.items():
        if not complete[method]:
            print(f"| {name} | not judged in this file | | | | | | | |")
            continue
        counts = {label: 0 for label in ("correct", "partial", "wrong")}
        for key, methods in proposed.items():
            if method in methods:
                counts[labels[key]] += 1
        total = sum(counts.values())
        low, high = wilson(counts["correct"], total)
        # Identical pairs are not judged; counted as correct here.
        overall = (identical[method] + counts["correct"]) / (identical[method] + total)
        print(
            f"| {name} | {total} | {counts['correct']} ({counts['correct'] / total:.2f}) "
            f"| {counts['partial']} | {counts['wrong']} | [{low:.2f}, {high:.2f}] "
            f"| {counts['correct']} | {identical[method]} | {overall:.2f} |"
        )


def cohen_kappa(first: Sequence[str], second: Sequence[str]) -> float:
    """Cohen's kappa of two annotators' labels of the same items (1 where both give every item
    one and the same label, which leaves kappa undefined)."""
    observed = sum(a == b for a, b in zip(first, second)) / len(first)
    expected = sum(
        (first.count(label) / len(first)) * (second.count(label) / len(second))
        for label in set(first) | set(second)
    )
    return 1.0 if expected == 1 else (observed - expected) / (1 - expected)


def agreement(sample: int, path: str) -> None:
    """How the sample's judgements agree with another annotator's of the same items: share of
    equal labels, Cohen's kappa over the three labels and over correct vs not."""
    first, second = judged(sample), judged(sample, path)
    keys = sorted(set(first) & set(second))
    if not keys:
        raise SystemExit(f"{path} judges none of sample {sample}'s items")
    labels = [first[key] for key in keys], [second[key] for key in keys]
    same = sum(a == b for a, b in zip(*labels))
    binary = [[label == "correct" for label in side] for side in labels]
    print(
        f"{len(keys)} items judged by both: {same} equal labels ({same / len(keys):.2f}), "
        f"Cohen's kappa {cohen_kappa(*labels):.2f}; "
        f"correct vs not: kappa {cohen_kappa(*binary):.2f}"
    )


def inside(pair: Tuple, other: Tuple) -> bool:
    """`pair`'s spans lie inside `other`'s, in the same sentence pair."""
    (pair_id, (s0, s1), (t0, t1)), (other_id, (os0, os1), (ot0, ot1)) = pair, other
    return pair_id == other_id and os0 <= s0 <= s1 <= os1 and ot0 <= t0 <= t1 <= ot1


def overlap(pair: Tuple, other: Tuple) -> bool:
    """The two pairs share words on both sides, in the same sentence pair."""
    (pair_id, (s0, s1), (t0, t1)), (other_id, (os0, os1), (ot0, ot1)) = pair, other
    return pair_id == other_id and s0 <= os1 and os0 <= s1 and t0 <= ot1 and ot0 <= t1


def minimal(pairs: Sequence[Tuple]) -> List[Tuple]:
    """The pairs that hold no other of `pairs` (one per nested region)."""
    return [key for key in pairs if not any(other != key and inside(other, key) for other in pairs)]


def regions(samples: Sequence[int]) -> None:
    """Over several samples: the earlier aligner's correct regions (its correct pairs that hold no
    other of its correct pairs) that today's aligners miss (no correct pair of theirs overlaps
    one on both sides), and their own correct regions that no correct pair of the old overlaps."""
    methods = ("old", "new", "new_emb_065")
    counts = {method: {"missed": 0, "mine": 0, "only_mine": 0} for method in methods[1:]}
    total = 0
    for sample in samples:
        proposed, _, _ = proposals(sample, methods)
        labels = judged(sample)
        correct = {
            method: [
                key
                for key, found in proposed.items()
                if method in found and labels[key] == "correct"
            ]
            for method in methods
        }
        old = minimal(correct["old"])
        total += len(old)
        for method in methods[1:]:
            mine = minimal(correct[method])
            counts[method]["missed"] += sum(
                not any(overlap(key, other) for other in correct[method]) for key in old
            )
            counts[method]["mine"] += len(mine)
            counts[method]["only_mine"] += sum(
                not any(overlap(key, other) for other in correct["old"]) for key in mine
            )
    print(
        f"| aligner | earlier aligner's regions missed, samples {', '.join(map(str, samples))} "
        "| own regions | of them, none of the old's overlapping |"
    )
    print("|---|---|---|---|")
    for method, count in counts.items():
        print(
            f"| {NAMES[method]} | {count['missed']} of {total} | {count['mine']} "
            f"| {count['only_mine']} |"
        )


def pooled(samples: Sequence[int]) -> None:
    """Each aligner's judged pairs over several samples, with the correct pairs that hold no
    other correct pair of the same aligner (one per nested region)."""

    totals = {method: {"correct": 0, "judged": 0, "wrong": 0, "minimal": 0} for method in NAMES}
    for sample in samples:
        proposed, _, _ = proposals(sample)
        labels = judged(sample)
        for method in NAMES:
            mine = [key for key, methods in proposed.items() if method in methods]
            if totals[method] is None or not all(key in labels for key in mine):
                totals[method] = None  # not judged in every sample
                continue
            correct = [key for key in mine if labels[key] == "correct"]
            totals[method]["correct"] += len(correct)
            totals[method]["judged"] += len(mine)
            totals[method]["wrong"] += sum(labels[key] == "wrong" for key in mine)
            totals[method]["minimal"] += len(minimal(correct))
    print(
        f"| aligner | correct of judged, samples {', '.join(map(str, samples))} | 95% interval "
        "| correct pairs found | of them, one per nested region | wrong |"
    )
    print("|---|---|---|---|---|---|")
    for method, name in NAMES.items():
        total = totals[method]
        if total is None:
            print(f"| {name} | not judged in every sample | | | | |")
            continue
        low, high = wilson(total["correct"], total["judged"])
        print(
            f"| {name} | {total['correct']} of {total['judged']} "
            f"({total['correct'] / total['judged']:.2f}) | [{low:.2f}, {high:.2f}] "
            f"| {total['correct']} | {total['minimal']} | {total['wrong']} |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--make-items", metavar="DIR")
    parser.add_argument("--sample", type=int, choices=sorted(SAMPLES), default=1)
    parser.add_argument("--judgements", help="another annotator's judgements of the sample")
    parser.add_argument("--item-prefix", default="K", help="with --make-items: the items' letter")
    parser.add_argument("--pool", help="samples pooled into one table, e.g. 3,4,5,6")
    parser.add_argument("--agreement", metavar="FILE", help="agreement with another annotator")
    parser.add_argument("--regions", help="the earlier aligner's regions missed, e.g. 3,4,5,6")
    arguments = parser.parse_args()
    if arguments.regions:
        regions([int(sample) for sample in arguments.regions.split(",")])
    elif arguments.agreement:
        agreement(arguments.sample, arguments.agreement)
    elif arguments.pool:
        pooled([int(sample) for sample in arguments.pool.split(",")])
    elif arguments.make_items:
        make_items(arguments.make_items, arguments.sample, arguments.item_prefix)
    else:
        table(arguments.sample, arguments.judgements)
