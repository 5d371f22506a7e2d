"""
`tft_experiments.locks.hold_grid`: processes that run the spec a grid ran with share it (as
shards do); one that would change the spec is refused while another runs the grid; one that
arrives while another changes it waits for it, then is refused if its spec is not the new one.
"""

import os

import pytest

from tests.held_locks import held_elsewhere
from tft_allennlp.common.folder_lock import HOST, FolderInUseError
from tft_experiments import locks
from tft_experiments.locks import hold_grid


def test_processes_with_the_grids_spec_share_it_and_a_change_is_refused(tmp_path):
    grid = str(tmp_path / "grid")
    alone = hold_grid(grid, lambda: True)  # alone, even a change goes on: exclusively
    assert not alone.shared
    alone.share()
    alone.release()
    assert not os.path.exists(grid)  # made for the lock, left empty: removed
    with held_elsewhere(grid, command="allennlp tft-experiment", shared=True):
        together = hold_grid(grid, lambda: False)
        assert together.shared
        together.release()
        with pytest.raises(FolderInUseError) as error:
            hold_grid(grid, lambda: True)
        assert str(error.value) == (
            f"{grid}: another tft-experiment runs this grid now, with the spec of its spec.json; "
            "run the changed spec once it has ended, or give another output_dir"
        )
    assert not os.path.exists(grid)


def test_a_process_waits_for_one_changing_the_spec_then_compares_with_the_new_one(
    tmp_path, monkeypatch
):
    grid = str(tmp_path / "grid")
    monkeypatch.setattr(locks, "SPEC_CHANGE_WAIT_SECONDS", 0.3)
    compared = []
    with held_elsewhere(grid, command="allennlp tft-experiment") as pid:
        with pytest.raises(FolderInUseError) as error:
            hold_grid(grid, lambda: compared.append(1) or False)
        assert str(error.value).startswith(
            f"{grid}: in use by allennlp tft-experiment, process {pid} on {HOST}, since "
        )
    assert compared == []  # its spec was never compared with one being written
    assert not os.path.exists(grid)
