import os

import pytest

from tft_allennlp.common.input_problems import (
    InputProblems,
    MalformedInputError,
    blank_reason,
    read_lines,
)


@pytest.mark.parametrize(
    "text, reason",
    [
        ("A man.", None),
        ("\u200bA", None),
        ("", "empty sentence"),
        (" \t", "empty sentence"),
        ("\u200b\u200b", "empty sentence: only invisible characters (U+200B)"),
        (
            "\ufeff \u2060\u00ad",
            "empty sentence: only invisible characters (U+00AD, U+2060, U+FEFF)",
        ),
        ("\x07", "empty sentence: only invisible characters (U+0007)"),
    ],
)
def test_a_sentence_of_invisible_characters_is_blank(text, reason):
    assert blank_reason(text) == reason


def test_a_lone_cr_is_a_malformed_line_not_data(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_bytes(b"a\tb\r\nc\td\re\tf\n")
    with pytest.raises(MalformedInputError, match=r"pairs.tsv:2: carriage return inside the line"):
        list(read_lines(str(path), InputProblems(str(path))))
    problems = InputProblems(str(path), lenient=True)
    assert list(read_lines(str(path), problems)) == [(1, "a\tb")]
    assert problems.skipped == {"carriage return inside the line": 1}


def test_a_named_pipe_is_refused_before_it_is_opened(tmp_path):
    """Opening a pipe would wait for a writer forever."""
    path = tmp_path / "pipe.tsv"
    os.mkfifo(path)
    with pytest.raises(MalformedInputError, match=r"pipe.tsv: not a regular file \(a named pipe\)"):
        list(read_lines(str(path), InputProblems(str(path))))
