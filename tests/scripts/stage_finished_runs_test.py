"""
research/scripts/stage_finished_runs.sh stages the grid-level files of a grid, its table of
finished runs among them, and .gitignore keeps its run directories out of git: their configs,
metrics, logs, per-epoch metrics, vocabularies, weights and encoders, and what lies beside them.
"""

import shutil
import subprocess

from tests import PROJECT_ROOT

GRID = "research/results/grid/experiment"
RUN = f"{GRID}/glue/minilm/none/lr0.0001/mrpc/n1000/seed1"
RUN_FILES = [
    "config.json",
    "metrics.json",
    "parameter_counts.json",
    "train.log",
    "out.log",
    "meta.json",
    "metrics_epoch_0.json",
    "vocabulary/labels.txt",
    "best.th",
    "model.tar.gz",
]
GRID_FILES = [
    "spec.json",
    "spec_history.jsonl",
    "attempts.jsonl",
    "runs.jsonl",
    "results.md",
    "runs.csv",
    "paired.csv",
    "scores.png",
    "configs/smart_mrpc.jsonnet",
]


def git(repository, *arguments):
    command = ["git", "-C", str(repository), "-c", "user.name=t", "-c", "user.email=t@t"]
    return subprocess.run(command + list(arguments), check=True, capture_output=True, text=True)


def test_only_the_grid_level_files_are_staged_and_the_runs_are_ignored(tmp_path):
    repository = tmp_path / "repository"
    (repository / "research/scripts").mkdir(parents=True)
    shutil.copy(
        PROJECT_ROOT / "research/scripts/stage_finished_runs.sh", repository / "research/scripts"
    )
    shutil.copy(PROJECT_ROOT / ".gitignore", repository)
    git(repository, "init", "-q")
    grid = repository / GRID
    injection = grid / "injection/minilm/tft"
    for directory, names in [
        (repository / RUN, RUN_FILES),
        (repository / RUN.replace("seed1", "seed2"), ["config.json", "train.log"]),
        (injection, ["config.json", "metrics.json", "encoder_fingerprint.json", "train.log"]),
        (injection / "encoder", ["config.json", "model.safetensors"]),
        (grid, GRID_FILES),
    ]:
        for name in names:
            (directory / name).parent.mkdir(parents=True, exist_ok=True)
            (directory / name).write_text("{}\n")
    # What lies beside a run: its log while it runs, its claim, a failure mark.
    for suffix in (".log", ".lock", ".failed", ".not_taken"):
        (repository / (RUN.replace("seed1", "seed2") + suffix)).write_text("x\n")

    subprocess.run(
        ["bash", "research/scripts/stage_finished_runs.sh", GRID], cwd=repository, check=True
    )

    staged = set(git(repository, "diff", "--cached", "--name-only").stdout.split())
    assert staged == {f"{GRID}/{name}" for name in GRID_FILES}
    # `git add -A` takes nothing of the runs either: .gitignore holds them.
    git(repository, "add", "-A")
    everything = set(git(repository, "diff", "--cached", "--name-only").stdout.split())
    assert everything - staged == {"research/scripts/stage_finished_runs.sh", ".gitignore"}
