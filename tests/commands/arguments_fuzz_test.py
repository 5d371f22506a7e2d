"""
Malformed invocations of every subcommand: bad numbers, missing or unreadable files, an output
that is the input under another spelling, inputs without a single record. Each must stop with a
one-line error naming the argument or file (and the line, for line-based inputs), without a
traceback, and leave every file as it was.

Argument and file checks run in this process, through the subcommands' own parsers, since an
`allennlp` process takes seconds to import; a few cases run the real command line to show that
what the user sees is that one line.
"""

import os
import subprocess
import sys

import pytest
from allennlp.commands import ArgumentParserWithDefaults
from allennlp.commands.subcommand import Subcommand

from tests import PROJECT_ROOT
from tests.commands.align_test import aligning_until
from tft_allennlp.commands import align

COMMANDS = ("tft-align", "tft-export", "tft-glue-submission", "tft-experiment")
PAIRS = "sentence1\tsentence2\nA man plays.\tA man is playing.\nIt rains.\tIt is raining.\n"
OLD_OUTPUT = "the corpus of an earlier run\n"


def parser():
    """`allennlp`'s parser with the plugin's subcommands, as `allennlp.commands.main` builds it."""
    parser = ArgumentParserWithDefaults(prog="allennlp")
    subparsers = parser.add_subparsers()
    for name in COMMANDS:
        Subcommand.by_name(name)().add_subparser(subparsers)
    return parser


def refusal(argv, capsys):
    """
    Runs `allennlp ARGV` in this process up to its exit; returns the exit code and the error
    line printed last: argparse's, or the message of `sys.exit(message)`, which Python prints
    before exiting with 1.
    """
    with pytest.raises(SystemExit) as stop:
        args = parser().parse_args(argv)
        args.func(args)
    if isinstance(stop.value.code, str):
        return 1, stop.value.code
    return stop.value.code, capsys.readouterr().err.strip().splitlines()[-1]


def snapshot(directory):
    """Every path under `directory`: a file's bytes, a link's target, None for a directory."""
    paths = {}
    for root, directories, files in os.walk(directory):
        for name in directories + files:
            path = os.path.join(root, name)
            if os.path.islink(path):
                paths[path] = os.readlink(path)
            else:
                paths[path] = None if os.path.isdir(path) else open(path, "rb").read()
    return paths


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """A directory with `pairs.tsv` and the output of an earlier run, as the working directory."""
    (tmp_path / "pairs.tsv").write_text(PAIRS)
    (tmp_path / "aligned.jsonl").write_text(OLD_OUTPUT)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    # File checks need no parse: the aligner is left out, for speed.
    monkeypatch.setattr(align, "align_stream", aligning_until())
    return tmp_path


BAD_NUMBERS = [
    ("tft-align", "--batch-size", "0"),
    ("tft-align", "--batch-size", "-3"),
    ("tft-align", "--batch-size", "x"),
    ("tft-align", "--batch-size", "1.5"),
    ("tft-align", "--workers", "0"),
    ("tft-align", "--max-sentence-chars", "0"),
    ("tft-align", "--similarity-threshold", "nan"),
    ("tft-align", "--similarity-threshold", "inf"),
    ("tft-align", "--similarity-threshold", "1.5"),
    ("tft-align", "--similarity-threshold", "-2"),
    ("tft-align", "--similarity-threshold", "high"),
    ("tft-align", "--embedding-layer", "top"),
    ("tft-align", "--aligner", "{not json"),
    ("tft-align", "--aligner", "[1, 2]"),
    ("tft-glue-submission", "--batch-size", "0"),
    ("tft-glue-submission", "--batch-size", "ten"),
    ("tft-experiment", "--jobs", "0"),
    ("tft-experiment", "--jobs", "two"),
    ("tft-experiment", "--shard", "3/2"),
    ("tft-experiment", "--shard", "2/2"),
    ("tft-experiment", "--shard", "1/0"),
    ("tft-experiment", "--shard", "x"),
    ("tft-experiment", "--poll-seconds", "-1"),
    ("tft-experiment", "--poll-seconds", "0"),
    ("tft-experiment", "--poll-seconds", "nan"),
]
POSITIONALS = {
    "tft-align": ["pairs.tsv", "out.jsonl"],
    "tft-glue-submission": ["out", "model.tar.gz"],
    "tft-experiment": ["spec.json"],
}


@pytest.mark.parametrize("command, option, value", BAD_NUMBERS)
def test_bad_numbers_are_refused_by_argparse(workspace, capsys, command, option, value):
    before = snapshot(workspace)
    code, error = refusal([command, *POSITIONALS[command], option, value], capsys)
    assert code == 2
    assert error.startswith(f"allennlp {command}: error: argument {option}: ")
    assert snapshot(workspace) == before


@pytest.mark.parametrize("value", ["-1", "1", "0.25"])
def test_similarity_thresholds_within_cosines_range_are_taken(value):
    args = parser().parse_args(["tft-align", "a", "b", "--similarity-threshold", value])
    assert args.similarity_threshold == float(value)


def test_the_embedding_shortcuts_become_the_aligner_parameters():
    args = parser().parse_args(
        ["tft-align", "a", "b", "--embeddings", "m", "--embedding-layer", "-2"]
        + ["--similarity-threshold", "0.6"]
    )
    assert align._aligner_parameters(args) == {
        "type": "tft_syntactic",
        "embeddings": "m",
        "similarity_threshold": 0.6,
        "embedding_layer": -2,
    }
    assert align._aligner_parameters(parser().parse_args(["tft-align", "a", "b"])) == {}


def spellings_of_the_input(directory):
    """Other paths of `pairs.tsv`; made in `directory`, the working directory."""
    os.symlink("pairs.tsv", directory / "link.tsv")
    os.link(directory / "pairs.tsv", directory / "hard.tsv")
    os.symlink(directory, directory / "alias")
    return [
        "pairs.tsv",
        "./pairs.tsv",
        str(directory / "pairs.tsv"),
        "sub/../pairs.tsv",
        "link.tsv",
        "hard.tsv",
        "alias/pairs.tsv",
    ]


def test_an_output_that_is_the_input_is_refused_in_every_spelling(workspace, capsys):
    outputs = spellings_of_the_input(workspace)
    before = snapshot(workspace)
    for output in outputs:
        for input_path in ("pairs.tsv", str(workspace / "link.tsv")):
            code, error = refusal(["tft-align", input_path, output], capsys)
            assert code == 1
            assert error == (
                f"tft-align: {output}: is the input file {input_path}; "
                "writing it would destroy the input"
            )
            assert snapshot(workspace) == before


def write(directory, name, content):
    path = directory / name
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    return name


# (input file content or None for none at all, extra arguments, the error after "tft-align: ")
ALIGN_FILES = [
    (None, [], "missing.tsv: No such file or directory"),
    ("", [], "input.tsv: no sentence pairs to read: the file is empty or holds only a header"),
    (
        "sentence1\tsentence2\n",
        [],
        "input.tsv: no sentence pairs to read: the file is empty or holds only a header",
    ),
    (
        "sentence1\tsentence2\nno tab here\nA.\tB.\n",
        [],
        "input.tsv:2: missing column: expected 2 tab-separated fields, found 1",
    ),
    ("A.\tB.\n\udcffC.\tD.\n", [], "input.tsv:2: invalid UTF-8: invalid start byte at byte 0"),
    ("A.\tB.\n\tD.\n", [], "input.tsv:2: empty sentence"),
    ('{"sentence1": "A."}\n', [], "input.tsv:1: missing column: expected string 'sentence1'"),
    ("A.\tB.\nC.\tlong sentence\n", ["--max-sentence-chars", "5"], "input.tsv:2: sentence too"),
    (
        "one\ntwo\n\n",
        ["--lenient"],
        "input.tsv: no valid sentence pairs: all 3 were malformed and skipped by lenient "
        "reading (2 missing column, 1 empty line)",
    ),
    (
        "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n0\t1\t2\tA.\tB.\n",
        [],
        "input.tsv: no sentence pairs to read: all 1 MRPC pairs are non-paraphrases "
        "(--mrpc-all-pairs aligns them too)",
    ),
    ("A.\tB.\n", ["--embeddings", "no-model"], "--embeddings no-model: no such directory"),
    (
        "A.\tB.\n",
        ["--aligner", '{"embeddings": "no-model"}'],
        "--embeddings no-model: no such directory",
    ),
    (
        "A.\tB.\n",
        ["--aligner", "{}", "--similarity-threshold", "0.7"],
        "give --embeddings, --similarity-threshold and --embedding-layer inside --aligner, not "
        "beside it",
    ),
    (
        "A.\tB.\n",
        ["--aligner", "{}", "--embedding-layer", "2"],
        "give --embeddings, --similarity-threshold and --embedding-layer inside --aligner",
    ),
    ("A.\tB.\n", ["--aligner", '{"type": "no_such"}'], "no_such not in acceptable choices"),
]


@pytest.mark.parametrize("content, extra, expected", ALIGN_FILES)
@pytest.mark.parametrize("output", ["aligned.jsonl", "new.jsonl"])
def test_align_refuses_unusable_input_and_leaves_the_output_alone(
    workspace, capsys, content, extra, expected, output
):
    source = "missing.tsv" if content is None else write(workspace, "input.tsv", content)
    before = snapshot(workspace)
    # With --force, which lets an existing output be replaced, but only by a finished one.
    code, error = refusal(["tft-align", source, output, *extra, "--force"], capsys)
    assert code == 1
    assert error.startswith(f"tft-align: {expected}")
    # The earlier output is intact and no new or temporary file is left behind.
    assert snapshot(workspace) == before


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["sub", "out.jsonl"], "sub: Is a directory"),
        (["pairs.tsv", "sub"], "sub: is a directory, not a file name for the output"),
        (["pairs.tsv", "nowhere/out.jsonl"], "nowhere/out.jsonl: no such directory: "),
        (["pairs.tsv"], "give INPUT and OUTPUT (or --evaluate GOLD)."),
        (["--evaluate", "gold.jsonl"], "gold.jsonl: No such file or directory"),
    ],
)
def test_align_names_the_unusable_path(workspace, capsys, argv, expected):
    before = snapshot(workspace)
    code, error = refusal(["tft-align", *argv], capsys)
    assert code == 1
    assert error.startswith(f"tft-align: {expected}")
    assert snapshot(workspace) == before


@pytest.fixture
def serialization_dir(tmp_path, monkeypatch):
    """A serialization directory's files that an export into it would overwrite."""
    directory = tmp_path / "run"
    directory.mkdir()
    (directory / "config.json").write_text('{"trainer": {"num_epochs": 3}}')
    (directory / "model.tar.gz").write_text("not really an archive")
    (directory / "best.th").write_text("weights")
    (tmp_path / "notes.txt").write_text("a file, not a directory")
    os.symlink(directory, tmp_path / "run-link")
    monkeypatch.chdir(tmp_path)
    return directory


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["missing.tar.gz", "out"], "missing.tar.gz: no such file or directory."),
        (["notes.txt", "out"], "notes.txt: not a readable model archive"),
        (["run/model.tar.gz", "notes.txt"], "notes.txt: exists and is not a directory."),
        (
            ["run/model.tar.gz", "out", "--weights-file", "run/missing.th"],
            "--weights-file run/missing.th: no such file.",
        ),
        (["run", "run"], "run: is the directory of run, which this command reads"),
        (["run", "./run/", "--force"], "./run/: is the directory of run, which this command "),
        (["run", "run-link"], "run-link: is the directory of run, which "),
        (["run/model.tar.gz", "run", "--force"], "run: is the directory of run/model.tar.gz, "),
        (["run-link/model.tar.gz", "./run"], "./run: is the directory of run-link/model.tar.gz"),
        (
            ["notes.txt", "run", "--weights-file", "run/best.th"],
            "run: is the directory of run/best.th, which ",
        ),
        (["run/model.tar.gz", "."], ".: is not empty; give --force to write into it"),
    ],
)
def test_export_names_the_unusable_path_and_writes_nothing(
    serialization_dir, capsys, argv, expected
):
    before = snapshot(serialization_dir.parent)
    code, error = refusal(["tft-export", *argv], capsys)
    assert code == 1
    assert error.startswith(f"tft-export: {expected}")
    assert snapshot(serialization_dir.parent) == before


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["out", "missing.tar.gz"], "missing.tar.gz: no such file or directory."),
        (["out", "notes.txt"], "notes.txt: not a readable model archive"),
        (["out", "run", "--glue-dir", "no-glue"], "--glue-dir no-glue: no such directory."),
        (["notes.txt", "run"], "notes.txt: exists and is not a directory."),
    ],
)
def test_glue_submission_names_the_unusable_path(serialization_dir, capsys, argv, expected):
    before = snapshot(serialization_dir.parent)
    code, error = refusal(["tft-glue-submission", *argv], capsys)
    assert code == 1
    assert error.startswith(f"tft-glue-submission: {expected}")
    assert snapshot(serialization_dir.parent) == before


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["missing.json"], "missing.json: No such file or directory"),
        (["run/config.json", "--output-dir", "notes.txt"], "--output-dir notes.txt: is a file"),
    ],
)
def test_experiment_names_the_unusable_path(serialization_dir, capsys, argv, expected):
    before = snapshot(serialization_dir.parent)
    code, error = refusal(["tft-experiment", *argv], capsys)
    assert code == 1
    assert error.startswith(f"tft-experiment: {expected}")
    assert snapshot(serialization_dir.parent) == before


def test_the_command_line_prints_one_line_and_no_traceback(tmp_path):
    """The real `allennlp` processes, started at once: what a user sees."""
    (tmp_path / "pairs.tsv").write_text(PAIRS)
    (tmp_path / "spec").mkdir()
    pairs = str(tmp_path / "pairs.tsv")
    same = "./" + os.path.relpath(pairs, PROJECT_ROOT)
    cases = [
        (["tft-align", pairs, same], 1, f"tft-align: {same}: is the input file {pairs}; "),
        (
            ["tft-align", pairs, str(tmp_path / "out.jsonl"), "--batch-size", "0"],
            2,
            "allennlp tft-align: error: argument --batch-size: must be at least 1, got 0",
        ),
        (
            ["tft-export", str(tmp_path / "missing.tar.gz"), str(tmp_path / "out")],
            1,
            f"tft-export: {tmp_path / 'missing.tar.gz'}: no such file or directory.",
        ),
        # jsonnet aborted the whole process on a directory.
        (["tft-experiment", str(tmp_path / "spec")], 1, f"tft-experiment: {tmp_path / 'spec'}: "),
    ]
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "allennlp", *argv],
            cwd=PROJECT_ROOT,
            env=dict(os.environ),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for argv, _, _ in cases
    ]
    for process, (argv, code, expected) in zip(processes, cases):
        _, stderr = process.communicate()
        assert process.returncode == code, (argv, stderr[-2000:])
        assert "Traceback" not in stderr
        assert stderr.strip().splitlines()[-1].startswith(expected)
    assert (tmp_path / "pairs.tsv").read_text() == PAIRS
    assert sorted(os.listdir(tmp_path)) == ["pairs.tsv", "spec"]
