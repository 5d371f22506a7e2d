"""
`tft_allennlp.common.folder_lock`: one command at a time in a folder. The lock is taken and
recorded, refused to a second process while the first lives (naming it, touching nothing),
let go at the end, taken over from a process that died holding it (saying so), and shared by
shared holders only.
"""

import json
import logging
import os

import pytest

from tests.held_locks import died_holding, held_elsewhere
from tft_allennlp.common.folder_lock import (
    HOST,
    LOCK_FILE,
    FolderInUseError,
    FolderLock,
    check_free,
    holder,
    lock_name,
)
from tft_allennlp.training.serialization_dir import left_by_a_failed_start


def test_the_lock_records_its_owner_and_goes_at_the_end(tmp_path):
    folder = tmp_path / "run"
    with FolderLock(str(folder), command="allennlp train") as lock:
        owner = json.loads((folder / LOCK_FILE).read_text())
        assert owner == lock.owner
        assert (owner["host"], owner["pid"], owner["command"]) == (
            HOST,
            os.getpid(),
            "allennlp train",
        )
        assert os.listdir(folder) == [LOCK_FILE]  # no draft left
        assert lock.made_folder
        # Nested in this process: the same lock, still held after the inner block.
        with FolderLock(str(folder)):
            pass
        assert (folder / LOCK_FILE).exists() and holder(str(folder)) is None
        (folder / "config.json").write_text("{}")
    assert os.listdir(folder) == ["config.json"]
    # A folder it made and nothing was written in is removed again; one that was there stays.
    with FolderLock(str(tmp_path / "empty")):
        pass
    assert not (tmp_path / "empty").exists()
    with FolderLock(str(folder)):
        pass
    assert os.listdir(folder) == ["config.json"]


def test_a_live_owner_is_refused_to_another_process_with_its_name(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    with held_elsewhere(folder, command="allennlp train") as pid:
        before = {name: (folder / name).read_bytes() for name in os.listdir(folder)}
        with pytest.raises(FolderInUseError) as error:
            FolderLock(str(folder)).acquire()
        since = json.loads((folder / LOCK_FILE).read_text())["since"]
        assert str(error.value) == (
            f"{folder}: in use by allennlp train, process {pid} on {HOST}, since {since}; wait "
            "until it ends, or write elsewhere"
        )
        assert {name: (folder / name).read_bytes() for name in os.listdir(folder)} == before
        assert holder(str(folder))["pid"] == pid
        with pytest.raises(FolderInUseError, match=f"^{folder}: in use by allennlp train"):
            check_free(str(folder))
        # Its files are a live run's, never the leftovers of a failed start.
        assert not left_by_a_failed_start(str(folder))
    assert left_by_a_failed_start(str(folder))
    assert os.listdir(folder) == ["config.json"]  # the owner removed its lock file
    with FolderLock(str(folder)) as lock:
        assert lock.reclaimed is None


def test_the_lock_of_a_process_that_died_holding_it_is_reclaimed_with_one_warning(tmp_path, caplog):
    folder = tmp_path / "run"
    pid = died_holding(folder)
    assert json.loads((folder / LOCK_FILE).read_text())["pid"] == pid
    assert holder(str(folder)) is None  # the system let it go with the process
    with caplog.at_level(logging.WARNING, logger="tft_allennlp.common.folder_lock"):
        with FolderLock(str(folder)) as lock:
            assert lock.reclaimed["pid"] == pid
            assert json.loads((folder / LOCK_FILE).read_text())["pid"] == os.getpid()
    assert [record.getMessage() for record in caplog.records] == [
        f"{folder}: reclaimed the lock of process {pid} on {HOST}, which is gone."
    ]
    assert os.listdir(folder) == []


def test_an_output_files_lock_lies_beside_it(tmp_path):
    output = tmp_path / "out.jsonl"
    with held_elsewhere(tmp_path, lock_name(str(output)), "allennlp tft-align"):
        assert os.listdir(tmp_path) == [".out.jsonl.tft-lock"]
        with pytest.raises(FolderInUseError, match=r"^out: in use by allennlp tft-align, process"):
            FolderLock(str(tmp_path), lock_name(str(output)), what="out").acquire()
        # Another file in the same folder, and the folder itself, are free.
        with FolderLock(str(tmp_path), lock_name(str(tmp_path / "other.jsonl"))):
            pass
        assert holder(str(tmp_path)) is None
    assert os.listdir(tmp_path) == []


def test_shared_holders_keep_out_an_exclusive_one_only(tmp_path):
    with held_elsewhere(tmp_path, command="allennlp tft-experiment", shared=True):
        with FolderLock(str(tmp_path), shared=True):
            assert (tmp_path / LOCK_FILE).exists()
        assert holder(str(tmp_path)) is None  # no exclusive holder
        with pytest.raises(FolderInUseError, match=r"in use by another process; wait until"):
            FolderLock(str(tmp_path)).acquire()
    with held_elsewhere(tmp_path, command="allennlp tft-experiment"):
        assert not FolderLock(str(tmp_path), shared=True).try_acquire()
    # The last shared holder removes the lock file.
    assert os.listdir(tmp_path) == []


def test_a_lock_file_that_is_a_symbolic_link_is_replaced_not_followed(tmp_path, caplog):
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / LOCK_FILE).symlink_to(victim)
    with caplog.at_level(logging.WARNING):
        with FolderLock(str(folder)):
            assert not os.path.islink(folder / LOCK_FILE)
            assert holder(str(folder)) is None  # this process's own lock, not another's
    assert victim.read_text() == "mine\n"
    assert f"removed {folder / LOCK_FILE}, a symbolic link, not a lock." in caplog.text
