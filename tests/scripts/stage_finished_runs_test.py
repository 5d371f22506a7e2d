"""
scripts/stage_finished_runs.sh stages what a reader or a resumed grid needs of a grid, and
.gitignore keeps the rest of a run out of git: logs, per-epoch metrics, vocabularies, weights.
"""

import shutil
import subprocess

from tests import PROJECT_ROOT

RUN = "results/grid/experiment/glue/minilm/none/lr0.0001/mrpc/n1000/seed1"
KEPT = ["config.json", "metrics.json", "parameter_counts.json", "reused_from.json"]
LEFT_OUT = [
    "train.log",
    "out.log",
    "meta.json",
    "metrics_epoch_0.json",
    "vocabulary/labels.txt",
    "best.th",
    "model.tar.gz",
]
GRID_FILES = ["spec.json", "attempts.jsonl", "results.md", "runs.csv", "paired.csv", "scores.png"]


def git(repository, *arguments):
    command = ["git", "-C", str(repository), "-c", "user.name=t", "-c", "user.email=t@t"]
    return subprocess.run(command + list(arguments), check=True, capture_output=True, text=True)


def test_only_what_a_grid_needs_is_staged_and_the_rest_is_ignored(tmp_path):
    repository = tmp_path / "repository"
    (repository / "scripts").mkdir(parents=True)
    shutil.copy(PROJECT_ROOT / "scripts/stage_finished_runs.sh", repository / "scripts")
    shutil.copy(PROJECT_ROOT / ".gitignore", repository)
    git(repository, "init", "-q")
    grid = repository / "results/grid/experiment"
    finished, unfinished = repository / RUN, repository / RUN.replace("seed1", "seed2")
    injection = grid / "injection/minilm/tft"
    for directory, names in [
        (finished, KEPT + LEFT_OUT),
        (unfinished, ["config.json", "train.log", "metrics_epoch_0.json"]),
        (injection, ["config.json", "metrics.json", "encoder_fingerprint.json", "train.log"]),
        (injection / "encoder", ["config.json", "metrics.json", "model.safetensors"]),
        (grid, GRID_FILES + ["configs/smart_mrpc.jsonnet"]),
    ]:
        for name in names:
            (directory / name).parent.mkdir(parents=True, exist_ok=True)
            (directory / name).write_text("{}\n")
    # A run's log while it runs, beside its directory.
    (repository / (RUN.replace("seed1", "seed2") + ".log")).write_text("training\n")

    subprocess.run(
        ["bash", "scripts/stage_finished_runs.sh", str(grid)], cwd=repository, check=True
    )

    staged = set(git(repository, "diff", "--cached", "--name-only").stdout.split())
    tft = "results/grid/experiment/injection/minilm/tft"
    assert staged == {
        *(f"{RUN}/{name}" for name in KEPT),
        *(f"{tft}/{name}" for name in ("config.json", "metrics.json", "encoder_fingerprint.json")),
        *(f"results/grid/experiment/{name}" for name in GRID_FILES),
        "results/grid/experiment/configs/smart_mrpc.jsonnet",
    }
    # `git add -A` takes none of the left-out files either, .gitignore holds them; only the
    # unfinished run's config.json, which the script leaves until the run has finished.
    git(repository, "add", "-A")
    everything = set(git(repository, "diff", "--cached", "--name-only").stdout.split())
    assert everything - staged == {
        "scripts/stage_finished_runs.sh",
        ".gitignore",
        RUN.replace("seed1", "seed2") + "/config.json",
    }
