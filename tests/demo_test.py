"""
The README's first command, `make demo` (scripts/demo.sh), end to end on the tiny BERT: it must
print each step's progress bars and a side-by-side table whose numbers are the two runs' metrics
(without a gain on the bundled sample's 5 dev pairs).
"""

import json
import os
import re
import subprocess
import sys

from tests import PROJECT_ROOT


def test_demo_runs_end_to_end_and_prints_the_runs_metrics(tmp_path, tiny_bert):
    out = tmp_path / "demo"
    environment = {**os.environ, "TFT_MODEL": tiny_bert, "INJECT_EPOCHS": "2", "OUT": str(out)}
    environment["PATH"] = os.path.dirname(sys.executable) + os.pathsep + environment["PATH"]
    del environment["GLUE_DIR"]  # the demo's own default: the bundled GLUE sample
    result = subprocess.run(
        ["bash", "scripts/demo.sh"],
        cwd=PROJECT_ROOT,
        env=environment,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert [line for line in lines if line.startswith("== ")] == [
        f"== {step}/5 {text}"
        for step, text in [
            (1, "Aligning phrases of fixtures/demo/paraphrases.tsv"),
            (2, f"Injecting paraphrasal relations into {tiny_bert} (2 epochs, batches of 8)"),
            (3, f"Exporting the injected encoder to {out}/encoder"),
            (4, "Fine-tuning the base encoder on mrpc (fixtures/glue, up to 1000 examples)"),
            (4, "Fine-tuning the injected encoder on mrpc (fixtures/glue, up to 1000 examples)"),
            (5, "Results"),
        ]
    ]
    # Progress bars of the training runs reach the terminal; their log lines do not.
    assert re.search(r"100%\|#+\| 13/13", result.stdout)
    assert "INFO" not in result.stdout

    base = json.loads((out / "glue-base/metrics.json").read_text())
    injected = json.loads((out / "glue-injected/metrics.json").read_text())
    # On the bundled sample's 5 dev pairs the scores are a pipeline check: no gain column.
    assert "  5 dev pairs, one seed: a check that the pipeline runs, too few to compare." in lines
    assert "  dev metric (5 pairs)         base  injected" in lines
    for metric in ("accuracy", "f1", "combined_score"):
        row = next(line.split() for line in lines if line.split()[:1] == [metric])
        b, i = 100 * base[f"validation_{metric}"], 100 * injected[f"validation_{metric}"]
        assert row[1:] == [f"{b:.1f}", f"{i:.1f}"]
    assert (
        "    allennlp tft-experiment research/specs/minilm_glue_cpu.jsonnet"
        "   (docs/experiments.md)" in lines
    )
    # The phrase-pair view: one block per pair of fixtures/demo/phrase_pairs.jsonl.
    assert sum(line.startswith("  sentence pair: p(paraphrase) = ") for line in lines) == 2
    # The page of the aligned pairs, and where it is.
    assert lines[-1] == f"  file://{out}/pairs.html"
    assert (out / "pairs.html").read_text().count('class="pair"') > 0


def test_progress_shows_each_bar_on_one_line_once():
    stream = "INFO loading\nwords 10it [00:01]\r 50%|##   | 1/2 [00:01]\r100%|#####| 2/2 [00:02]\r"
    stream += "100%|#####| 2/2 [00:03]\nINFO done\n"
    result = subprocess.run(
        [sys.executable, "scripts/demo_report.py", "progress"],
        cwd=PROJECT_ROOT,
        input=stream.encode(),
        capture_output=True,
        env={**os.environ, "COLUMNS": "21"},
    )
    assert result.returncode == 0
    assert result.stdout.decode() == (
        "\r"
        + "words 10it [00:01]".ljust(20)
        + "\r"
        + "50%|##   | 1/2 [00:01]"[-20:]
        + "\r"
        + "100%|#####| 2/2 [00:02]"[-20:]
        + "\n"
    )


def test_compare_shows_a_gain_only_on_a_real_dev_set(tmp_path):
    base, injected = tmp_path / "base.json", tmp_path / "injected.json"
    base.write_text(json.dumps({"validation_accuracy": 0.7, "validation_loss": 0.6}))
    injected.write_text(json.dumps({"validation_accuracy": 0.75, "validation_loss": 0.5}))
    dev = tmp_path / "dev.tsv"
    dev.write_text("header\n" + "row\n" * 408)
    result = subprocess.run(
        [sys.executable, "scripts/demo_report.py", "compare", str(base), str(injected), str(dev)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
    )
    lines = result.stdout.splitlines()
    assert lines[0] == "  dev metric (408 pairs)       base  injected     gain"
    assert lines[1].split() == ["accuracy", "70.0", "75.0", "+5.0"]
