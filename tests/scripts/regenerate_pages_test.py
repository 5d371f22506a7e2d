"""
The pages under research/results/ that the harness and the analysis scripts write regenerate
byte for byte from the grids' tables of finished runs (`runs.jsonl`), without a run directory:
each grid's report (`--report-only`: results.md, runs.csv, paired.csv, scores.png) from its
spec.json and runs.jsonl alone, then the verdict pages from those reports.
"""

import shutil
import subprocess
import sys

import pytest

from research.scripts import RESULTS, claims_verdicts, multisource_verdicts, tuned_verdicts
from tft_experiments import ExperimentSpec
from tft_experiments.commands.experiment import write_outputs
from tft_experiments.table import TABLE

GRIDS = sorted(path.parent.parent.name for path in RESULTS.glob(f"*/experiment/{TABLE}"))
REPORT = ("results.md", "runs.csv", "paired.csv", "scores.png")


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory):
    """A copy of research/results/ with each grid's spec.json and runs.jsonl, and its report."""
    root = tmp_path_factory.mktemp("results")
    for grid in GRIDS:
        committed, copy = RESULTS / grid / "experiment", root / grid / "experiment"
        copy.mkdir(parents=True)
        for name in ("spec.json", TABLE):
            shutil.copy(committed / name, copy / name)
        write_outputs(ExperimentSpec.from_file(str(committed / "spec.json"), str(copy)))
    return root


def test_every_grid_keeps_a_table():
    assert len(GRIDS) == 16
    # A grid in progress here has its run directories; none is committed.
    committed = subprocess.run(
        ["git", "ls-files", "--", "*/experiment/glue/*", "*/experiment/injection/*"],
        cwd=RESULTS,
        capture_output=True,
        text=True,
        check=True,
    )
    assert committed.stdout == "", "run directories are not kept"


@pytest.mark.parametrize("grid", GRIDS)
def test_a_grids_report_regenerates_from_its_table_alone(regenerated, grid):
    committed, copy = RESULTS / grid / "experiment", regenerated / grid / "experiment"
    for name in REPORT:
        if (committed / name).exists():
            assert (copy / name).read_bytes() == (committed / name).read_bytes(), name
        else:  # a grid none of whose reported runs finished
            assert not (copy / name).exists(), name
    # The table was all it read: it added no row, and found no run directory.
    assert (copy / TABLE).read_bytes() == (committed / TABLE).read_bytes()
    assert not (copy / "glue").exists() and not (copy / "injection").exists()


@pytest.mark.parametrize(
    "script, runs, written",
    [
        (claims_verdicts, [], ["verdicts.md", "verdicts.png"]),
        (claims_verdicts, ["--seeds", "2", "3"], ["verdicts_seeds_2_3.md"]),
        (multisource_verdicts, [], ["verdicts_multisource.md", "verdicts_multisource.png"]),
        (
            multisource_verdicts,
            ["--seeds", *map(str, range(2, 11))],
            ["verdicts_multisource_seeds_2-10.md"],
        ),
        (tuned_verdicts, [], ["verdicts_tuned.md"]),
    ],
)
def test_the_verdict_pages_regenerate_from_the_regenerated_reports(
    regenerated, tmp_path, monkeypatch, capsys, script, runs, written
):
    grids = {name: regenerated / path.relative_to(RESULTS) for name, path in script.GRIDS.items()}
    monkeypatch.setattr(script, "GRIDS", grids)
    monkeypatch.setattr(script, "OUTPUT", tmp_path)
    monkeypatch.setattr(sys, "argv", [script.__name__, *runs])
    script.main()
    capsys.readouterr()
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(written)
    for name in written:
        assert (tmp_path / name).read_bytes() == (RESULTS / "claims" / name).read_bytes(), name
