import json
import os
import subprocess
import sys

import pytest
from allennlp.common.checks import ConfigurationError

from tft_allennlp.common.output_paths import (
    PARTIAL_MARKER,
    check_output_directory,
    check_output_file,
    draft_name,
    output_directory,
    remove_stale_drafts,
)


def gone_pid():
    """The id of a process that has ended."""
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


def test_an_existing_file_needs_force_and_the_input_is_never_an_output(tmp_path):
    (tmp_path / "in.tsv").write_text("input")
    (tmp_path / "out.jsonl").write_text("earlier")
    os.symlink(tmp_path / "in.tsv", tmp_path / "link.tsv")
    with pytest.raises(ConfigurationError, match=r"out.jsonl: exists; give --force"):
        check_output_file(str(tmp_path / "out.jsonl"), False, [str(tmp_path / "in.tsv")])
    assert check_output_file(str(tmp_path / "out.jsonl"), True) == str(tmp_path / "out.jsonl")
    assert check_output_file(str(tmp_path / "new.jsonl"), False) == str(tmp_path / "new.jsonl")
    for output in ("in.tsv", "link.tsv"):
        with pytest.raises(ConfigurationError, match="is the input file"):
            check_output_file(str(tmp_path / output), True, [str(tmp_path / "in.tsv")])


def test_a_non_empty_directory_needs_force_and_an_input_directory_is_never_one(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine/notes.txt").write_text("keep")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigurationError, match="mine: is not empty; give --force"):
        check_output_directory(str(tmp_path / "mine"), False)
    check_output_directory(str(tmp_path / "mine"), True)
    check_output_directory(str(tmp_path / "empty"), False)
    check_output_directory(str(tmp_path / "new"), False)
    # The directory of an input file, even with --force; one that holds the command's own
    # output (`own`) is resumed without it.
    with pytest.raises(ConfigurationError, match="is the directory of .*notes.txt, which this"):
        check_output_directory(str(tmp_path / "mine"), True, [str(tmp_path / "mine/notes.txt")])
    check_output_directory(str(tmp_path / "mine"), False, own=["spec.json", "notes.txt"])
    (tmp_path / "file").write_text("")
    with pytest.raises(ConfigurationError, match="file: exists and is not a directory"):
        check_output_directory(str(tmp_path / "file"), True)


def test_a_failed_command_leaves_no_directory_it_created_and_no_marker(tmp_path):
    with pytest.raises(RuntimeError):
        with output_directory(str(tmp_path / "new")) as path:
            assert os.path.exists(os.path.join(path, PARTIAL_MARKER))
            open(os.path.join(path, "half.bin"), "w").close()
            raise RuntimeError("killed")
    assert not (tmp_path / "new").exists()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine/notes.txt").write_text("keep")
    with pytest.raises(RuntimeError):
        with output_directory(str(tmp_path / "mine"), force=True):
            raise RuntimeError("killed")
    assert os.listdir(tmp_path / "mine") == ["notes.txt"]
    with output_directory(str(tmp_path / "done")) as path:
        open(os.path.join(path, "model.safetensors"), "w").close()
    assert os.listdir(tmp_path / "done") == ["model.safetensors"]


def test_a_directory_a_killed_command_created_is_taken_over(tmp_path):
    directory = tmp_path / "out"
    directory.mkdir()
    (directory / "half.safetensors").write_text("half")
    marker = {"host": draft_name("x").split(".")[-3], "pid": gone_pid(), "created": True}
    (directory / PARTIAL_MARKER).write_text(json.dumps(marker))
    with output_directory(str(directory)) as path:
        assert sorted(os.listdir(path)) == [PARTIAL_MARKER]
    # A process that still runs, or one of another host, may be writing it: not taken over.
    for owner in ({**marker, "pid": os.getppid()}, {**marker, "host": "elsewhere"}):
        (directory / "half.safetensors").write_text("half")
        (directory / PARTIAL_MARKER).write_text(json.dumps(owner))
        with pytest.raises(ConfigurationError, match="is not empty"):
            check_output_directory(str(directory), False)


def test_drafts_of_gone_processes_are_removed(tmp_path):
    pid, host = gone_pid(), draft_name("x").split(".")[-3]
    names = {
        f"out.jsonl.{pid}.tmp": False,
        f"out.jsonl.{host}.{pid}.tmp": False,
        f"out.jsonl.{host}.{os.getppid()}.tmp": True,  # running
        f"out.jsonl.elsewhere.{pid}.tmp": True,  # another host's
        f"other.jsonl.{host}.{pid}.tmp": True,  # another file's
        "out.jsonl": True,
    }
    for name in names:
        (tmp_path / name).write_text("")
    remove_stale_drafts(str(tmp_path), "out.jsonl")
    assert sorted(os.listdir(tmp_path)) == sorted(name for name, kept in names.items() if kept)
    remove_stale_drafts(str(tmp_path))
    assert f"other.jsonl.{host}.{pid}.tmp" not in os.listdir(tmp_path)
