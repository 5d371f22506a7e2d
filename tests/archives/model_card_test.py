"""
The model card's validation metrics: the training run's `metrics.json` beside the archive, or
none, with the reason, and no numbers (the exports' cards: tests/commands/export_test.py).
"""

import json

import pytest

from tft_allennlp.archives.model_card import model_card

CONFIG = {
    "dataset_reader": {"type": "tft_glue", "task": "rte", "train_size": None},
    "train_data_path": "glue_data/RTE/train.tsv",
    "validation_data_path": "glue_data/RTE/dev.tsv",
    "model": {"type": "tft_glue_classifier", "task": "rte"},
    "data_loader": {"batch_size": 32},
    "trainer": {"num_epochs": 4, "optimizer": {"type": "tft_adamw", "lr": 3e-5}},
}
METRICS = {"best_epoch": 1, "epoch": 3, "best_validation_accuracy": 0.625}


@pytest.mark.parametrize(
    "case, reason",
    [
        ("recorded", None),
        ("no metrics.json", "no readable `metrics.json` beside the archive"),
        ("another run's config.json", "is another run's"),
        ("no validation", "recorded no validation metrics"),
        ("--weights-file", "another file's (`--weights-file`)"),
    ],
)
def test_the_card_reports_the_runs_metrics_or_says_why_not(case, reason, tmp_path):
    metrics = {"epoch": 3} if case == "no validation" else METRICS
    if case != "no metrics.json":
        (tmp_path / "metrics.json").write_text(json.dumps(metrics))
    config = {**CONFIG, "random_seed": 2} if case == "another run's config.json" else CONFIG
    (tmp_path / "config.json").write_text(json.dumps(config))
    weights = str(tmp_path / "other.th") if case == "--weights-file" else None
    card = model_card(
        "transformers", CONFIG, str(tmp_path / "model.tar.gz"), "roberta-base", weights
    )
    assert "base_model: roberta-base" in card
    if reason is None:
        assert "at epoch 2 of the 4 trained" in card and "| accuracy | 0.6250 |" in card
        assert "\nmetrics:\n- accuracy\n" in card
    else:
        assert reason in card
        assert "0.625" not in card and "\nmetrics:" not in card
