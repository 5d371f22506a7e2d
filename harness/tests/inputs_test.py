import json
import os

import pytest
from allennlp.common.checks import ConfigurationError

from tft_experiments import ExperimentSpec
from tft_experiments.inputs import check_inputs

PAIRS = "first\tsecond\tverdict\nthe cat sat .\ta cat sat .\tsame\n"


def grid(tmp_path, train, validation="dev.tsv", **values):
    """A grid of a custom task `pairs` read from `train` and `validation` (in `tmp_path`)."""
    (tmp_path / "dev.tsv").write_text(PAIRS)
    description = {"sentence1": "first", "sentence2": "second", "label": "verdict"}
    pairs = {
        "task": {**description, "labels": ["same", "different"]},
        "train_data_path": str(tmp_path / train),
        "validation_data_path": str(tmp_path / validation),
    }
    return ExperimentSpec(
        output_dir=str(tmp_path / "out"),
        base_models={"b": "m"},
        tasks=["rte", "pairs"],
        custom_tasks={"pairs": pairs},
        glue_dir="g",
        variants=["none"],
        **values,
    )


@pytest.mark.parametrize(
    "make, problem",
    [
        (None, "No such file or directory"),
        (lambda path: path.mkdir(), "Is a directory"),
        (lambda path: path.write_text(""), "is empty"),
        (os.mkfifo, "not a regular file (a named pipe)"),
    ],
)
def test_a_custom_task_file_that_runs_could_not_read_is_named(tmp_path, make, problem):
    if make is not None:
        make(tmp_path / "train.tsv")
    spec = grid(tmp_path, "train.tsv")
    with pytest.raises(ConfigurationError) as refused:
        check_inputs(spec, "grid.json")
    path = tmp_path / "train.tsv"
    assert str(refused.value).startswith(
        f"grid.json: custom_tasks['pairs'].train_data_path: {path}: {problem}"
    )


def test_the_validation_file_is_checked_too(tmp_path):
    (tmp_path / "train.tsv").write_text(PAIRS)
    spec = grid(tmp_path, "train.tsv", validation="missing.tsv")
    with pytest.raises(ConfigurationError, match="'pairs'\\].validation_data_path: .*missing.tsv"):
        check_inputs(spec, "grid.json")
    check_inputs(grid(tmp_path, "train.tsv"), "grid.json")


def test_only_the_files_of_a_task_with_a_run_left_to_train_are_checked(tmp_path):
    spec = grid(tmp_path, "gone.tsv", seeds=[1, 2])
    runs = [run for run in spec.glue_runs() if run.task == "pairs"]
    for run in runs:
        os.makedirs(run.directory)
        with open(os.path.join(run.directory, "metrics.json"), "w") as handle:
            json.dump({"validation_accuracy": 0.5}, handle)
    # Both runs of the task finished (a grid whose data is on another machine): nothing to read.
    check_inputs(spec, "grid.json")
    # One to be trained again (--force with a changed spec) reads them.
    with pytest.raises(ConfigurationError, match="gone.tsv: No such file"):
        check_inputs(spec, "grid.json", again=runs[1:])
    os.remove(os.path.join(runs[0].directory, "metrics.json"))
    with pytest.raises(ConfigurationError, match="gone.tsv: No such file"):
        check_inputs(spec, "grid.json")
