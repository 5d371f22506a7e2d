import errno
import os
import subprocess
import sys

import pytest

from tft_allennlp.common.atomic_files import (
    DRAFT_PREFIX,
    atomic_output,
    link_atomically,
    naming_path,
    remove_drafts,
    same_content,
)


def test_a_failed_write_leaves_the_old_file_and_no_draft(tmp_path):
    path = tmp_path / "metrics.json"
    path.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_output(str(path)) as stream:
            stream.write("half of the new")
            raise RuntimeError("killed")
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["metrics.json"]
    with atomic_output(str(path)) as stream:
        stream.write("new")
    assert path.read_text() == "new" and os.listdir(tmp_path) == ["metrics.json"]


def test_an_error_that_names_no_file_is_raised_again_naming_it(tmp_path):
    with pytest.raises(OSError) as error:
        with naming_path(str(tmp_path / "best.th")):
            raise OSError(errno.ENOSPC, "No space left on device")
    assert str(error.value) == f"[Errno 28] No space left on device: '{tmp_path / 'best.th'}'"
    with pytest.raises(OSError, match="other.th"):  # one that names its own file stays
        with naming_path(str(tmp_path / "best.th")):
            raise OSError(errno.ENOENT, "No such file", str(tmp_path / "other.th"))


def test_a_write_past_the_disk_names_the_file_and_leaves_nothing(tmp_path):
    """A file size limit in a child process: writes past it fail as on a full disk, no path."""
    path = tmp_path / "model_state_e1_b0.th"
    # A fresh interpreter, not a fork: a fork of the test process, whose torch has started its
    # threads, can deadlock in the child.
    child = f"""
import resource, signal, torch
from tft_allennlp.common.atomic_files import save_torch_atomically
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (10_000, 10_000))
try:
    save_torch_atomically({{"w": torch.zeros(100_000)}}, {str(path)!r})
    print("no error")
except BaseException as error:
    print(f"{{type(error).__name__}}: {{error}}")
"""
    result = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=300, check=True
    )
    assert result.stdout.strip() == f"OSError: [Errno 27] File too large: '{path}'"
    assert os.listdir(tmp_path) == []


def test_links_and_drafts(tmp_path):
    (tmp_path / "model_state.th").write_bytes(b"weights")
    (tmp_path / "best.th").write_bytes(b"older weights")
    link_atomically(str(tmp_path / "model_state.th"), str(tmp_path / "best.th"))
    assert os.path.samefile(tmp_path / "model_state.th", tmp_path / "best.th")
    (tmp_path / "copy.th").write_bytes(b"weights")
    assert same_content(str(tmp_path / "copy.th"), str(tmp_path / "best.th"))
    (tmp_path / (DRAFT_PREFIX + "config.json.abc")).write_text("{")
    (tmp_path / (DRAFT_PREFIX + "vocabulary.abc")).mkdir()
    assert len(remove_drafts(str(tmp_path))) == 2
    assert sorted(os.listdir(tmp_path)) == ["best.th", "copy.th", "model_state.th"]
