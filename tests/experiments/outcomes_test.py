import json

from tft_allennlp.experiments.outcomes import read_metrics, read_metrics_file


def test_a_damaged_metrics_file_is_named_and_its_run_unfinished(tmp_path, caplog):
    """An empty metrics.json made tft-experiment raise a JSONDecodeError naming no file."""
    path = tmp_path / "metrics.json"
    for text in ("", '{"best_epoch": 1, "valid', "[1, 2]"):
        path.write_text(text)
        caplog.clear()
        assert read_metrics(str(tmp_path), "last") is None
        assert f"{path}: damaged (" in caplog.text
        assert "its run counts as unfinished" in caplog.text
    assert read_metrics_file(str(tmp_path / "missing.json")) is None
    path.write_text(json.dumps({"validation_accuracy": 0.5, "validation_loss": 0.7}))
    assert read_metrics(str(tmp_path), "last") == {"accuracy": 0.5}
