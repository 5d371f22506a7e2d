import json
import os

from tft_experiments import ExperimentSpec
from tft_experiments.outcomes import is_finished, read_metrics, read_metrics_file


def test_a_damaged_metrics_file_is_named_and_its_run_unfinished(tmp_path, caplog):
    """An empty metrics.json made tft-experiment raise a JSONDecodeError naming no file."""
    spec = ExperimentSpec(
        output_dir=str(tmp_path),
        base_models={"b": "m"},
        tasks=["rte"],
        glue_dir="g",
        variants=["none"],
    )
    (run,) = spec.glue_runs({})
    os.makedirs(run.directory)
    path = os.path.join(run.directory, "metrics.json")
    for text in ("", '{"best_epoch": 1, "valid', "[1, 2]"):
        with open(path, "w") as handle:
            handle.write(text)
        caplog.clear()
        assert read_metrics(run, "last") is None and not is_finished(run)
        assert f"{path}: damaged (" in caplog.text
        assert "its run counts as unfinished" in caplog.text
    assert read_metrics_file(str(tmp_path / "missing.json")) is None
    with open(path, "w") as handle:
        json.dump({"validation_accuracy": 0.5, "validation_loss": 0.7}, handle)
    assert read_metrics(run, "last") == {"accuracy": 0.5}
