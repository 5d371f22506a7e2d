import json
import os
import random
import subprocess
import sys

import numpy

from tests import PROJECT_ROOT
from tests.alignment.sentences import sentence
from tft_allennlp.alignment.evaluation import WordAlignmentGold
from tft_allennlp.alignment.learned_scorer import LearnedScorer
from tft_allennlp.alignment.link_features import LinkFeatures
from tft_allennlp.alignment.phrase_aligners import LearnedPhraseAligner
from tft_allennlp.alignment.scorer_training import GoldPair, fit_link_scorer, split

ADJECTIVES = [("big", "large"), ("quick", "fast"), ("small", "little"), ("angry", "mad")]
NOUNS = ["dog", "cat", "man", "bird", "horse", "child"]
VERBS = [("chased", "followed"), ("saw", "noticed"), ("liked", "loved")]


def synthetic_pairs(count, seed=0):
    """`(source words, target words)`: "the ADJ NOUN VERB the NOUN ." with the adjective and the
    verb replaced by a synonym in the target; the gold links every word to the same position."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        adjective, verb = rng.choice(ADJECTIVES), rng.choice(VERBS)
        subject, obj = rng.sample(NOUNS, 2)
        pairs.append(
            (
                ["the", adjective[0], subject, verb[0], "the", obj, "."],
                ["the", adjective[1], subject, verb[1], "the", obj, "."],
            )
        )
    return pairs


def gold_pairs(count, genre, seed=0):
    pos = ["DET", "ADJ", "NOUN", "VERB", "DET", "NOUN", "PUNCT"]
    phrases = [(1, 1), (2, 2), (3, 3), (5, 5), (1, 2), (4, 5), (3, 5), (0, 2)]
    result = []
    for k, (source, target) in enumerate(synthetic_pairs(count, seed)):
        links = {(i, i) for i in range(7)}
        gold = WordAlignmentGold(f"{genre}{k}", source, target, links, links)
        parsed = [
            sentence(" ".join(words), pos=pos, phrases=phrases)._replace(
                heads=[2, 2, 3, 3, 5, 3, 3]
            )
            for words in (source, target)
        ]
        result.append(GoldPair(genre, gold, parsed[0], parsed[1], {}))
    return result


def test_each_genre_is_split_apart_the_same_way_every_time():
    pairs = gold_pairs(10, "a") + gold_pairs(5, "b")
    fit, select = split(pairs, 0.2, seed=1)
    assert [p.genre for p in select] == ["a", "a", "b"]
    assert len(fit) == 12 and not {p.gold.id for p in fit} & {p.gold.id for p in select}
    assert split(pairs, 0.2, seed=1) == (fit, select)
    assert split(pairs, 0.2, seed=2)[1] != select


def test_the_link_scorer_learns_that_words_in_place_link():
    features = LinkFeatures(["lexical"])
    first, second = fit_link_scorer(features, gold_pairs(20, "a"), negative_share=1.0)
    assert first.names == features.names
    (pair,) = gold_pairs(1, "a", seed=5)
    row = features.first_round(pair.source, pair.target)
    scores = first.probabilities(row)
    # The diagonal (the gold) scores above every other cell, "big" ~ "large" included.
    assert scores.diagonal().min() > 0.5 > scores[~numpy.eye(7, dtype=bool)].max()
    assert second.names[-6:] == ["score", "previous_score", "next_score", "heads_score"] + [
        "row_other_best",
        "column_other_best",
    ]


def test_the_script_trains_a_scorer_the_aligner_loads(tmp_path):
    files = []
    for genre, seed in (("one", 1), ("two", 2)):
        path = tmp_path / f"{genre}.tsv"
        lines = [
            f"{k}\t{' '.join(s)}\tN/A\t{' '.join(t)}\tN/A\t1\t1\t"
            + " ".join(f"{i}-{i}" for i in range(len(s)))
            + "\t\t"
            for k, (s, t) in enumerate(synthetic_pairs(30, seed))
        ]
        path.write_text("\n".join(lines) + "\n")
        files.append(f"{genre}={path}")
    output = tmp_path / "scorer.json"
    result = subprocess.run(
        [sys.executable, "research/scripts/train_learned_aligner.py", "--groups", "lexical"]
        + ["--output", str(output), "--train", *files],
        cwd=PROJECT_ROOT,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    scorer = LearnedScorer.from_file(str(output))
    provenance = json.loads(output.read_text())["provenance"]
    assert provenance["fit_pairs"] == 48 and provenance["select_pairs"] == 12
    assert provenance["train"] == {"one": "one.tsv", "two": "two.tsv"}
    assert len(provenance["selection"]) == 5  # one row per link threshold tried
    aligner = LearnedPhraseAligner(str(output))
    (pair,) = gold_pairs(1, "x", seed=9)
    links = {tuple(link) for link in aligner.align(pair.source, pair.target)["word_links"]}
    assert links == {(i, i) for i in range(7)}
    assert scorer.link_threshold in (0.3, 0.4, 0.5, 0.6, 0.7)
