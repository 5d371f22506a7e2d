"""
Seeded fuzzing of every reader of user files: valid records with randomly chosen lines broken
in ways that always make them invalid. Strict reading must stop at the first broken line with
an error naming `file:line`; lenient reading must never raise, and must read exactly the
untouched records.
"""

import json
import random
import re

import pytest

from tests import FIXTURES_ROOT
from tests.readers import corpus_reader, glue_reader
from tft_allennlp.alignment.pair_input import read_sentence_pairs
from tft_allennlp.common.input_problems import InputProblems, MalformedInputError


def tsv_breakers(fields: int):
    return [
        lambda line: line.replace("\t", " ", 1),  # a missing column
        lambda line: line + "\textra",  # one column too many
        lambda line: "\t" * (fields - 1),  # every field empty
        lambda line: line.encode("utf-8")[:3].decode("latin-1") + "\udcff",  # invalid UTF-8
    ]


def glue_breakers():
    return tsv_breakers(4) + [lambda line: line.rsplit("\t", 1)[0] + "\tmaybe"]  # unknown label


def corpus_breakers():
    def reverse_span(line):
        record = json.loads(line)
        record["source_phrases"] = [[1, 0]]
        return json.dumps(record)

    def out_of_range(line):
        record = json.loads(line)
        record["target_phrases"] = [[0, len(record["target"])]]
        return json.dumps(record)

    def empty_source(line):
        record = json.loads(line)
        record["source"] = []
        return json.dumps(record)

    return [
        lambda line: line[: len(line) // 2],  # truncated JSON
        lambda line: line.replace('"', "'"),  # not JSON
        reverse_span,
        out_of_range,
        empty_source,
        lambda line: "\udcff" + line,  # invalid UTF-8
    ]


def write_broken(path, header, lines, breakers, rng):
    """Breaks about a third of `lines`; returns the (1-based) file line numbers broken."""
    broken = set()
    with open(path, "wb") as handle:
        if header is not None:
            handle.write(header.encode() + b"\n")
        offset = 2 if header is not None else 1
        for index, line in enumerate(lines):
            if rng.random() < 0.33:
                line = rng.choice(breakers)(line)
                broken.add(index + offset)
            handle.write(line.encode("utf-8", "surrogateescape") + b"\n")
    return broken


def rte_lines():
    rows = [line.rstrip("\n") for line in open(FIXTURES_ROOT / "glue/RTE/train.tsv")][1:]
    return rows * 5


NO_RANDOM_PAIRS = {"type": "tft_paper", "random_pairs_per_paraphrase": 0}


def first_error_line(error: Exception) -> int:
    return int(re.search(r":(\d+): ", str(error)).group(1))


@pytest.mark.parametrize("seed", range(8))
def test_glue_reader(tmp_path, seed):
    rng = random.Random(seed)
    path = str(tmp_path / "rte.tsv")
    lines = rte_lines()
    broken = write_broken(path, "index\tsentence1\tsentence2\tlabel", lines, glue_breakers(), rng)
    if broken:
        with pytest.raises(MalformedInputError) as error:
            list(glue_reader("rte", lenient=False).read(path))
        assert first_error_line(error.value) == min(broken)
    instances = list(glue_reader("rte", lenient=True).read(path))
    assert [i["metadata"]["line_number"] for i in instances] == [
        n for n in range(2, len(lines) + 2) if n not in broken
    ]


@pytest.mark.parametrize("seed", range(8))
def test_aligned_corpus_reader(tmp_path, seed):
    rng = random.Random(seed)
    path = str(tmp_path / "corpus.jsonl")
    lines = [line.rstrip("\n") for line in open(FIXTURES_ROOT / "paraphrase/aligned.jsonl")] * 3
    broken = write_broken(path, None, lines, corpus_breakers(), rng)
    if broken:
        with pytest.raises(MalformedInputError) as error:
            list(corpus_reader(lenient=False, negative_sampler=NO_RANDOM_PAIRS).read(path))
        assert first_error_line(error.value) == min(broken)
    instances = list(corpus_reader(lenient=True, negative_sampler=NO_RANDOM_PAIRS).read(path))
    assert [i["metadata"]["line_number"] for i in instances] == [
        n for n in range(1, len(lines) + 1) if n not in broken
    ]


@pytest.mark.parametrize("seed", range(8))
def test_aligner_input(tmp_path, seed):
    rng = random.Random(seed)
    path = str(tmp_path / "pairs.tsv")
    lines = [line.rstrip("\n") for line in open(FIXTURES_ROOT / "demo/paraphrases.tsv")][1:]
    broken = write_broken(path, "sentence1\tsentence2", lines, tsv_breakers(2), rng)
    if broken:
        with pytest.raises(MalformedInputError) as error:
            list(read_sentence_pairs(path, InputProblems(path)))
        assert first_error_line(error.value) == min(broken)
    problems = InputProblems(path, lenient=True)
    pairs = list(read_sentence_pairs(path, problems))
    assert [number for number, _, _ in pairs] == [
        n for n in range(2, len(lines) + 2) if n not in broken
    ]
    assert problems.num_skipped == len(broken)
