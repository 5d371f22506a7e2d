"""Prints the demo's results: `metrics METRICS_JSON` or `predictions INPUT_JSONL OUTPUT_JSONL`."""
import json
import sys


def show_metrics(path: str) -> None:
    metrics = json.load(open(path))
    for key, value in metrics.items():
        if key.startswith("validation_") and isinstance(value, float):
            print(f"  {key[len('validation_'):]:>15}: {value:.4f}")
    print(f"  {'training time':>15}: {metrics['training_duration']}")


def show_predictions(inputs: str, outputs: str) -> None:
    with open(inputs) as pairs, open(outputs) as predictions:
        for pair_line, prediction_line in zip(pairs, predictions):
            pair, prediction = json.loads(pair_line), json.loads(prediction_line)
            if "label" in prediction:
                verdict = f"label {prediction['label']} (p={max(prediction['probs']):.2f})"
            else:
                verdict = f"score {prediction['score']:.2f}"
            text = " | ".join(pair[key] for key in ("sentence1", "sentence2", "sentence") if key in pair)
            print(f"  {verdict:<18} {text}")


if __name__ == "__main__":
    if sys.argv[1] == "metrics":
        show_metrics(sys.argv[2])
    else:
        show_predictions(sys.argv[2], sys.argv[3])
