import json

import pytest

from research.scripts.injection_epochs import table


def _epoch(run, epoch, sentence, phrase, loss, duration, best=None):
    metrics = {
        "validation_sentence_accuracy": sentence,
        "validation_phrase_accuracy": phrase,
        "training_loss": loss,
        "training_duration": duration,
    }
    (run / f"metrics_epoch_{epoch}.json").write_text(json.dumps(metrics))
    if best is not None:
        (run / "metrics.json").write_text(json.dumps({**metrics, "best_epoch": best}))


def test_table_lists_epochs_in_order_and_marks_the_kept_one(tmp_path):
    run = tmp_path / "experiment/injection/minilm/tft_multi"
    run.mkdir(parents=True)
    # Two attempts of this run (1,800 s and 5,400 s), one of another.
    attempts = [("injection/minilm/tft_multi", 0, 1800), ("injection/minilm/tft", 0, 99)]
    attempts.append(("injection/minilm/tft_multi", 2000, 7400))
    (tmp_path / "experiment/attempts.jsonl").write_text(
        "".join(
            json.dumps({"directory": d, "started": a, "ended": b, "outcome": "x"}) + "\n"
            for d, a, b in attempts
        )
    )
    # Epochs 10 and 2 check the numeric order (not "10" < "2").
    _epoch(run, 0, 0.9, 0.75, 1.0, "0:10:00.5")
    _epoch(run, 2, 0.95, 0.8125, 0.5, "0:30:00.1")
    _epoch(run, 10, 0.99, 0.8, 0.25, "1:50:00.9", best=2)
    _epoch(run, 1, 0.925, 0.78, 0.75, "0:20:00.0")
    rows = table([run]).splitlines()[2:]
    assert rows == [
        "| tft_multi | 0 | 90.00 | 75.00 | 1.0000 |  |",
        "| tft_multi | 1 | 92.50 | 78.00 | 0.7500 |  |",
        "| tft_multi | 2 | 95.00 | 81.25 | 0.5000 | best (kept) |",
        "| tft_multi | 10 | 99.00 | 80.00 | 0.2500 |  |",
        "",
        "Time on one core each, all attempts: tft_multi: 2 attempts, 2.0 hours.",
    ]


def test_a_running_injection_gets_a_running_row(tmp_path):
    run = tmp_path / "experiment/injection/minilm/tft"
    run.mkdir(parents=True)
    _epoch(run, 0, 0.5, 0.25, 2.0, "0:01:00")
    lines = table([run]).splitlines()
    assert lines[-3] == "| tft | 1 | | | | running |"
    assert lines[-1] == (
        "Time on one core each, all attempts: tft: 0 attempts, 0.0 hours, and the one in progress."
    )


def test_a_directory_without_epochs_is_an_error_naming_it(tmp_path):
    with pytest.raises(ValueError, match=str(tmp_path)):
        table([tmp_path])
