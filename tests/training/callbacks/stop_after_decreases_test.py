import types

from allennlp.common import Params
from allennlp.training.callbacks import TrainerCallback
from allennlp.training.metric_tracker import MetricTracker


def build(tmp_path):
    return TrainerCallback.from_params(
        Params({"type": "tft_stop_after_decreases"}), serialization_dir=str(tmp_path)
    )


def test_stops_at_the_second_decrease_not_before(tmp_path):
    callback = build(tmp_path)
    trainer = types.SimpleNamespace(_metric_tracker=MetricTracker("+phrase_accuracy"))
    # 0.60 -> 0.55 is the first decrease; a new best in between does not reset the count.
    history = [0.50, 0.60, 0.55, 0.70, 0.72, 0.65]
    stopped_at = None
    for epoch, value in enumerate(history):
        callback.on_epoch(trainer, {"validation_phrase_accuracy": value}, epoch)
        if trainer._metric_tracker.should_stop_early():
            stopped_at = epoch
            break
    assert stopped_at == 5


def test_state_survives_recovery(tmp_path):
    callback = build(tmp_path)
    trainer = types.SimpleNamespace(_metric_tracker=MetricTracker("+phrase_accuracy"))
    for epoch, value in enumerate([0.5, 0.4]):
        callback.on_epoch(trainer, {"validation_phrase_accuracy": value}, epoch)
    resumed = build(tmp_path)
    resumed.load_state_dict(callback.state_dict())
    resumed.on_epoch(trainer, {"validation_phrase_accuracy": 0.3}, 2)
    assert trainer._metric_tracker.should_stop_early()


def test_ignores_epochs_without_validation(tmp_path):
    callback = build(tmp_path)
    trainer = types.SimpleNamespace(_metric_tracker=MetricTracker("+phrase_accuracy"))
    callback.on_epoch(trainer, {"training_phrase_accuracy": 0.1}, 0)
    assert callback.state_dict() == {"previous": None, "seen_decreases": 0}
