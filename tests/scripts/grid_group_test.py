"""
research/scripts/grid_group.sh: a grid script started from another program leads a process group
of its own, and its `stop` signals that group only, waits for it, and leaves a stale group file
alone; a second start while the grid runs is refused.
"""

import os
import shutil
import signal
import subprocess
import time

from tests import PROJECT_ROOT

# A grid script in miniature: one background process standing for a grid's `allennlp train`,
# which records the signal it ends on.
GRID = """\
set -euo pipefail
cd "$(dirname "$0")/../.."
source research/scripts/grid_group.sh
grid_group runs/fake.pgid "$@"
nohup bash -c 'trap "echo TERM > runs/ended; exit 0" TERM
  echo $$ >> runs/children; while true; do sleep 0.1; done; : allennlp' > /dev/null 2>&1 &
"""


def wait_for(path, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not path.exists() or not path.read_text().strip():
        assert time.monotonic() < deadline, f"{path} was not written"
        time.sleep(0.05)
    return path.read_text().strip()


def run(repository, *arguments):
    return subprocess.run(
        ["bash", "research/scripts/fake_grids.sh", *arguments],
        cwd=repository,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_stop_ends_the_grid_group_and_nothing_else(tmp_path):
    repository = tmp_path / "repository"
    (repository / "research/scripts").mkdir(parents=True)
    shutil.copy(PROJECT_ROOT / "research/scripts/grid_group.sh", repository / "research/scripts")
    (repository / "research/scripts/fake_grids.sh").write_text(GRID)

    # Started by this process (not a shell with job control): the script shares our process
    # group, so it must move to one of its own first.
    run(repository)
    group = int(wait_for(repository / "runs/fake.pgid"))
    child = int(wait_for(repository / "runs/children"))
    try:
        check_stop(repository, group, child)
    finally:  # nothing left running if it failed
        for pid in (repository / "runs/children").read_text().split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass


def check_stop(repository, group, child):
    assert group != os.getpgid(0)
    assert os.getpgid(child) == group

    # A second start while the grid runs would put it out of `stop`'s reach: refused.
    second = subprocess.run(
        ["bash", "research/scripts/fake_grids.sh"], cwd=repository, capture_output=True, text=True
    )
    assert second.returncode == 1
    assert f"a grid already runs (process group {group})" in second.stderr
    assert int((repository / "runs/fake.pgid").read_text()) == group

    assert run(repository, "stop").stdout == f"stopped group {group}\n"
    # `stop` returns once the whole group has ended, each process on the SIGTERM it was sent.
    assert (repository / "runs/ended").read_text() == "TERM\n"
    assert subprocess.run(["pgrep", "-g", str(group)], capture_output=True).returncode == 1

    # Again, the group file now names a group that no longer exists (or, later, someone
    # else's): nothing is signalled, and a new start is not refused.
    assert run(repository, "stop").stdout == "no grid runs (runs/fake.pgid)\n"
    (repository / "runs/fake.pgid").unlink()
    assert run(repository, "stop").stdout == "no grid runs (runs/fake.pgid)\n"
    run(repository)
    assert int(wait_for(repository / "runs/fake.pgid")) != group
    run(repository, "stop")
