import json
import os
import pathlib
import subprocess
import sys

import pytest
from allennlp.common.checks import ConfigurationError

from tft_allennlp.common.folder_lock import LOCK_FILE
from tft_allennlp.common.output_paths import (
    PARTIAL_MARKER,
    STAGING_PREFIX,
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


def test_files_appear_together_and_a_failed_command_leaves_the_directory_as_it_was(tmp_path):
    with pytest.raises(RuntimeError):
        with output_directory(str(tmp_path / "new")) as staging:
            # Written in a staging folder inside the directory, nothing in the directory itself.
            assert os.path.dirname(staging) == str(tmp_path / "new")
            open(os.path.join(staging, "half.bin"), "w").close()
            # And the directory's lock, while the command writes it.
            assert sorted(os.listdir(tmp_path / "new")) == [LOCK_FILE, os.path.basename(staging)]
            raise RuntimeError("failed")
    assert not (tmp_path / "new").exists()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine/notes.txt").write_text("keep")
    (tmp_path / "mine/model.safetensors").write_text("an earlier export")
    with pytest.raises(RuntimeError):
        with output_directory(str(tmp_path / "mine"), force=True) as staging:
            (pathlib.Path(staging) / "model.safetensors").write_text("half")
            raise RuntimeError("failed")
    assert sorted(os.listdir(tmp_path / "mine")) == ["model.safetensors", "notes.txt"]
    assert (tmp_path / "mine/model.safetensors").read_text() == "an earlier export"
    with output_directory(str(tmp_path / "mine"), force=True) as staging:
        (pathlib.Path(staging) / "model.safetensors").write_text("new")
        os.mkdir(os.path.join(staging, "1_Pooling"))
    assert sorted(os.listdir(tmp_path / "mine")) == ["1_Pooling", "model.safetensors", "notes.txt"]
    assert (tmp_path / "mine/model.safetensors").read_text() == "new"


def _host():
    return draft_name("x").split(".")[-3]


def test_a_killed_command_leaves_only_what_it_wrote_and_the_next_removes_only_that(tmp_path):
    directory = tmp_path / "out"
    directory.mkdir()
    pid = gone_pid()
    staging = directory / f"{STAGING_PREFIX}{_host()}.{pid}"
    staging.mkdir()
    (staging / "model.safetensors").write_text("half")
    # Only what the killed command wrote is there: the next command needs no --force.
    check_output_directory(str(directory), False)
    with output_directory(str(directory)) as path:
        (pathlib.Path(path) / "config.json").write_text("{}")
    assert os.listdir(directory) == ["config.json"]
    # A staging folder of a process that still runs, or of another host's, is not a leftover.
    for name in (f"{STAGING_PREFIX}{_host()}.{os.getppid()}", f"{STAGING_PREFIX}elsewhere.{pid}"):
        (directory / name).mkdir()
        with pytest.raises(ConfigurationError, match="is not empty"):
            check_output_directory(str(directory), False)
        (directory / name).rmdir()


def test_an_old_marker_never_makes_a_command_delete_the_users_files(tmp_path):
    """What an older version left, or a marker someone wrote: it names nothing to delete."""
    directory = tmp_path / "out"
    directory.mkdir()
    (directory / "thesis.tex").write_text("mine")
    marker = {"host": _host(), "pid": gone_pid(), "created": True}
    (directory / PARTIAL_MARKER).write_text(json.dumps(marker))
    with pytest.raises(ConfigurationError, match="out: is not empty; give --force"):
        with output_directory(str(directory)):
            pass
    with output_directory(str(directory), force=True) as path:
        (pathlib.Path(path) / "config.json").write_text("{}")
    assert sorted(os.listdir(directory)) == ["config.json", "thesis.tex"]
    assert (directory / "thesis.tex").read_text() == "mine"
    # Alone, the marker of a gone process is a leftover; that of a running one is not.
    (directory / "thesis.tex").unlink()
    (directory / "config.json").unlink()
    (directory / PARTIAL_MARKER).write_text(json.dumps(marker))
    check_output_directory(str(directory), False)
    (directory / PARTIAL_MARKER).write_text(json.dumps({**marker, "pid": os.getppid()}))
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
