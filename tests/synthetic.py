"""
Synthetic data files of any size for the tests, from the tiny BERT's words: an MRPC-layout GLUE
file and an aligned paraphrase corpus.
"""

import json
import random

from tests.tiny_bert import WORDS


def write_mrpc(path, rows: int, seed: int = 0) -> None:
    """`rows` MRPC rows (3 to 12 words a sentence) under the MRPC header: row i is line i + 2."""
    rng = random.Random(seed)
    lines = ["Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"]
    for row in range(rows):
        first, second = (" ".join(rng.choices(WORDS, k=rng.randint(3, 12))) for _ in range(2))
        lines.append(f"{row % 2}\t{2 * row}\t{2 * row + 1}\t{first}\t{second}")
    path.write_text("\n".join(lines) + "\n")


def write_corpus(path, lines: int, seed: int = 0) -> None:
    """`lines` aligned pairs of six words, three two-word phrases a side, two of them aligned."""
    rng = random.Random(seed)
    phrases = [[0, 1], [2, 3], [4, 5]]
    with open(path, "w") as out:
        for _ in range(lines):
            record = {
                "source": rng.choices(WORDS, k=6),
                "target": rng.choices(WORDS, k=6),
                "source_phrases": phrases,
                "target_phrases": phrases,
                "alignments": [[[0, 1], [0, 1]], [[2, 3], [2, 3]]],
            }
            out.write(json.dumps(record) + "\n")
