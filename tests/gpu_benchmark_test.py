"""
`benchmarks/gpu_benchmark.py` needs a GPU for its real figures; on the CPU with the tiny model
it runs the same code path, so that the script is known to work where no GPU is lent.
"""

import json
import subprocess
import sys

from tests import PROJECT_ROOT


def test_gpu_benchmark_runs_on_the_cpu_with_a_tiny_model(tmp_path, tiny_bert):
    output = tmp_path / "gpu.json"
    command = [
        sys.executable,
        "benchmarks/gpu_benchmark.py",
        "--device",
        "cpu",
        "--model",
        tiny_bert,
        "--batch-size",
        "4",
        "--steps",
        "2",
        "--warmup",
        "1",
        "--peak-tflops",
        "1",
        "--json",
        str(output),
    ]
    result = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text())
    assert report["device"] == "cpu" and report["dtype"] == "torch.bfloat16"
    for side in ("injection", "glue", "bare"):
        assert report[side]["tokens_per_second"] > 0 and 0 < report[side]["mfu"] < 1
    ratio = report["bare"]["median_step_seconds"] / report["injection"]["median_step_seconds"]
    assert report["injection_vs_bare_throughput"] == ratio
    assert (
        "| injection |" in result.stdout and "injection / bare encoder throughput" in result.stdout
    )
