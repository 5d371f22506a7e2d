"""
Prints the demo's results (scripts/demo.sh):

    demo_report.py injection METRICS_JSON        dev accuracies of the injection run
    demo_report.py compare BASE_JSON INJECTED_JSON  GLUE dev metrics side by side
    demo_report.py phrases PREDICTIONS_JSONL     the phrase-pair view of `allennlp predict`
"""
import json
import sys


def injection(path: str) -> None:
    metrics = json.load(open(path))
    for name in ("sentence_accuracy", "phrase_accuracy"):
        print(f"  dev {name}: {metrics[f'best_validation_{name}']:.3f}")


def compare(base_path: str, injected_path: str) -> None:
    base, injected = json.load(open(base_path)), json.load(open(injected_path))
    names = [k[len("validation_"):] for k in base if k.startswith("validation_") and k != "validation_loss"]
    print(f"  {'dev metric (last epoch)':<24} {'base':>8} {'injected':>9} {'gain':>8}")
    for name in names:
        b, i = base[f"validation_{name}"], injected[f"validation_{name}"]
        print(f"  {name:<24} {100 * b:8.1f} {100 * i:9.1f} {100 * (i - b):+8.1f}")


def phrases(path: str) -> None:
    for line in open(path):
        prediction = json.loads(line)
        print(f"  sentence pair: p(paraphrase) = {prediction['paraphrase_probability']:.2f}")
        for pair in prediction["phrase_pairs"]:
            print(
                f"    {pair['paraphrase_probability']:.2f}  {pair['source']!r} ~ {pair['target']!r}"
                f"  ({pair['label']})"
            )


if __name__ == "__main__":
    {"injection": injection, "compare": compare, "phrases": phrases}[sys.argv[1]](*sys.argv[2:])
