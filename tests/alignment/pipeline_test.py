import os
import signal
import sys
import threading
import time

import psutil
import pytest

from tft_allennlp.alignment import pipeline


def test_runs_of_whitespace_never_become_words(pipeline):
    source, target = pipeline.parse_text(["What does  Quora \t mean?", "What does Quora mean?"])
    assert source.words == target.words == ["What", "does", "Quora", "mean", "?"]


def test_given_words_are_parsed_as_given(pipeline):
    # spaCy would split "show-style" and "can't"; words given as split stay as they are.
    (parsed,) = pipeline.parse_word_lists([["game", "show-style", "videos", "ca", "n't", "stop"]])
    assert parsed.words == ["game", "show-style", "videos", "ca", "n't", "stop"]
    assert len(parsed.pos) == len(parsed.heads) == 6


def test_a_pair_that_fails_to_parse_is_reported_not_fatal(pipeline, monkeypatch):
    """A parser error inside a batch marks that pair only; the others are aligned."""
    parse = pipeline.parse_text

    def failing(texts):
        if any("BOOM" in text for text in texts):
            raise RuntimeError("parser crashed")
        return parse(texts)

    monkeypatch.setattr(pipeline, "parse_text", failing)
    results = pipeline.align_texts(
        [
            (1, "A man sleeps.", "A man is asleep."),
            (2, "BOOM", "x"),
            (3, "Dogs run.", "Dogs are running."),
        ]
    )
    assert [number for number, _ in results] == [1, 2, 3]
    assert "parsing failed" in results[1][1]
    assert '"alignments"' in results[0][1] and '"alignments"' in results[2][1]


@pytest.mark.parametrize("way", ["kernel signal", "watcher thread"])
def test_a_worker_ends_within_a_second_of_its_parents_sigkill(way):
    """A parent (tft-align) forks a worker that calls `exit_with_parent`, as the pool's
    initializer does; SIGKILL the parent, and the worker is gone within a second, by Linux's
    parent-death signal or, where there is none, by the thread that polls the parent."""
    if way == "kernel signal" and not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux's")
    read, write = os.pipe()
    parent = os.fork()
    if parent == 0:
        code = 1
        try:
            worker = os.fork()
            if worker == 0:
                if way == "watcher thread":
                    pipeline.parent_death_signal = lambda number: False
                pipeline.exit_with_parent(os.getppid())
                kind = "thread" if threading.active_count() > 1 else "signal"
                os.write(write, f"{os.getpid()} {kind}\n".encode())
                time.sleep(30)
            else:
                time.sleep(30)
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read) as reports:
        worker, kind = reports.readline().split()
    assert kind == ("signal" if way == "kernel signal" else "thread")
    os.kill(parent, signal.SIGKILL)
    os.waitpid(parent, 0)
    killed = time.monotonic()
    while _running(int(worker)) and time.monotonic() - killed < 5:
        time.sleep(0.02)
    ended = time.monotonic() - killed
    if _running(int(worker)):
        os.kill(int(worker), signal.SIGKILL)
    assert ended < 1.0


def test_a_worker_whose_parent_died_before_it_started_ends_at_once(monkeypatch):
    exits = []
    monkeypatch.setattr(pipeline.os, "_exit", exits.append)
    monkeypatch.setattr(pipeline, "parent_death_signal", lambda number: True)
    pipeline.exit_with_parent(os.getppid() + 1)  # not this process's parent: it is gone
    assert exits == [1]


def _running(pid: int) -> bool:
    """Whether `pid` exists and is not a zombie (a dead process its new parent has not reaped)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
