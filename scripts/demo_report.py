"""
Prints the demo's results (scripts/demo.sh):

    demo_report.py injection METRICS_JSON        dev accuracies of the injection run
    demo_report.py compare BASE_JSON INJECTED_JSON DEV_TSV  GLUE dev metrics side by side
    demo_report.py phrases PREDICTIONS_JSONL     the phrase-pair view of `allennlp predict`
    COMMAND | demo_report.py progress            only COMMAND's progress bars, on one line
"""

import json
import re
import shutil
import sys

# A tqdm bar: "... 45%|####5     | 14/32 [..]" or, without a total, "... 1000it [..]".
PROGRESS_BAR = re.compile(r"\d+%\||\d+it \[")


def injection(path: str) -> None:
    metrics = json.load(open(path))
    for name in ("sentence_accuracy", "phrase_accuracy"):
        print(f"  dev {name}: {metrics[f'best_validation_{name}']:.3f}")


# Below this many dev pairs the demo prints no gain: one seed on a handful of pairs says nothing.
MIN_PAIRS_FOR_GAIN = 200
REAL_COMPARISON = "allennlp tft-experiment research/specs/minilm_glue_cpu.jsonnet"


def compare(base_path: str, injected_path: str, dev_path: str) -> None:
    base, injected = json.load(open(base_path)), json.load(open(injected_path))
    names = [
        k[len("validation_") :]
        for k in base
        if k.startswith("validation_") and k != "validation_loss"
    ]
    pairs = (
        sum(1 for line in open(dev_path, encoding="utf-8") if line.strip()) - 1
    )  # less the header
    with_gain = pairs >= MIN_PAIRS_FOR_GAIN
    if not with_gain:
        print(f"  {pairs} dev pairs, one seed: a check that the pipeline runs, too few to compare.")
    header = f"  {f'dev metric ({pairs} pairs)':<24} {'base':>8} {'injected':>9}"
    print(header + (f" {'gain':>8}" if with_gain else ""))
    for name in names:
        b, i = base[f"validation_{name}"], injected[f"validation_{name}"]
        row = f"  {name:<24} {100 * b:8.1f} {100 * i:9.1f}"
        print(row + (f" {100 * (i - b):+8.1f}" if with_gain else ""))
    print("  A real comparison (several seeds and sizes, gains paired by seed, with their spread):")
    print(f"    {REAL_COMPARISON}   (docs/experiments.md)")


def phrases(path: str) -> None:
    for line in open(path):
        prediction = json.loads(line)
        print(f"  sentence pair: p(paraphrase) = {prediction['paraphrase_probability']:.2f}")
        for pair in prediction["phrase_pairs"]:
            print(
                f"    {pair['paraphrase_probability']:.2f}  {pair['source']!r} ~ {pair['target']!r}"
                f"  ({pair['label']})"
            )


def progress() -> None:
    """
    Echoes the progress bars in stdin (the rest is in the step's log) on one terminal line,
    keeping the end of each bar where the line is too narrow; a finished bar keeps its line.
    """
    width = shutil.get_terminal_size().columns - 1
    shown = buffer = finished = ""
    while True:
        chunk = sys.stdin.read(1)
        if not chunk:
            break
        if chunk not in "\r\n":
            buffer += chunk
            continue
        # tqdm redraws a bar when it closes, with a different rate: compare without the timing.
        if PROGRESS_BAR.search(buffer) and buffer.split("[")[0] != finished:
            shown = buffer.strip()[-width:]
            sys.stdout.write("\r" + shown.ljust(width))
            if "100%|" in buffer:
                sys.stdout.write("\n")
                shown, finished = "", buffer.split("[")[0]
            sys.stdout.flush()
        buffer = ""
    if shown:
        sys.stdout.write("\n")


if __name__ == "__main__":
    commands = {
        "injection": injection,
        "compare": compare,
        "phrases": phrases,
        "progress": progress,
    }
    commands[sys.argv[1]](*sys.argv[2:])
