import collections

import pytest

from tft_allennlp.alignment.pair_input import read_sentence_pairs
from tft_allennlp.common.input_problems import InputProblems, MalformedInputError


def read(path, lenient=False, **kwargs):
    problems = InputProblems(str(path), lenient)
    return list(read_sentence_pairs(str(path), problems, **kwargs)), problems


def test_tsv_with_and_without_header(tmp_path):
    with_header = tmp_path / "a.tsv"
    with_header.write_text("sentence1\tsentence2\nA b.\tC d.\nE f.\tG h.\n")
    assert read(with_header)[0] == [(2, "A b.", "C d."), (3, "E f.", "G h.")]
    without = tmp_path / "b.tsv"
    without.write_text("A b.\tC d.\n")
    assert read(without)[0] == [(1, "A b.", "C d.")]


def test_mrpc_layout_takes_paraphrases_only(tmp_path):
    path = tmp_path / "mrpc.tsv"
    path.write_bytes(
        (
            "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
            "1\t1\t2\tA b.\tC d.\n0\t3\t4\tE f.\tG h.\n"
        ).encode()
    )
    counts = collections.Counter()
    problems = InputProblems(str(path))
    assert list(read_sentence_pairs(str(path), problems, counts=counts)) == [(2, "A b.", "C d.")]
    assert counts == {"MRPC non-paraphrase pairs left out": 1}
    assert len(read(path, mrpc_all_pairs=True)[0]) == 2


def test_json_lines(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text(
        '{"sentence1": "A b.", "sentence2": "C d."}\n\n{"sentence1": "E", "sentence2": "F"}\n'
    )
    assert read(path)[0] == [(1, "A b.", "C d."), (3, "E", "F")]


@pytest.mark.parametrize(
    "content, line, reason",
    [
        (b"A b.\tC d.\nonly one column\n", 2, "missing column"),
        (b"A b.\tC d.\n   \tC d.\n", 2, "empty sentence"),
        (b"A b.\tC d.\nA \xff.\tC d.\n", 2, "invalid UTF-8"),
        (b'{"sentence1": "A", "sentence2": "B"}\n{"sentence1": "A"\n', 2, "invalid JSON"),
        (b'{"sentence1": "A", "sentence2": "B"}\n{"sentence1": "A"}\n', 2, "missing column"),
        (b"A b.\tC d.\n" + b"x" * 30 + b"\tC d.\n", 2, "sentence too long"),
    ],
)
def test_bad_lines_name_the_line_or_are_counted(tmp_path, content, line, reason):
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    with pytest.raises(MalformedInputError, match=rf"bad.txt:{line}: {reason}"):
        read(path, max_sentence_chars=20)
    pairs, problems = read(path, lenient=True, max_sentence_chars=20)
    assert len(pairs) == 1 and problems.num_skipped == 1
    assert list(problems.skipped) == [reason]
