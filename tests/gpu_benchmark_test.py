"""
`benchmarks/gpu_benchmark.py` needs a GPU for its real figures; on the CPU with the tiny model
it runs the same code path (the one `benchmarks/gpu/run.sh` takes on the GPU, with pairs cut to a
fixed wordpiece length), so that the script is known to work where no GPU is lent.
"""

import json
import subprocess
import sys

import pytest

from tests import PROJECT_ROOT


def test_gpu_benchmark_runs_on_the_cpu_with_a_tiny_model(tmp_path, tiny_bert):
    output = tmp_path / "gpu.json"
    command = [sys.executable, "benchmarks/gpu_benchmark.py", "--device", "cpu"]
    command += ["--model", tiny_bert, "--batch-sizes", "2", "4", "--length", "64"]
    command += ["--steps", "2", "--warmup", "1", "--peak-tflops", "1", "--json", str(output)]
    # The speed options, compiled without generating code (aot_eager: what dynamo and autograd
    # do of the compiled encoders, without inductor's minutes of C++ on the CPU).
    command += ["--variants", "fused", "compiled", "cudagraphs", "--backend", "aot_eager"]
    result = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text())
    assert report["device"] == "cpu" and report["dtype"] == "torch.bfloat16"
    assert list(report["batches"]) == ["2", "4"]
    for batch_size, results in report["batches"].items():
        # Every pair is cut to exactly 64 wordpieces: no padding.
        assert results["instances"] == int(batch_size) and results["length"] == 64
        assert results["real_tokens"] == 64 * int(batch_size)
        for side in ("injection", "glue", "bare"):
            assert results[side]["tokens_per_second"] > 0 and 0 < results[side]["mfu"] < 1
            assert results[side]["step_memory_gb"] is None  # a GPU's only
        ratio = results["bare"]["median_step_seconds"] / results["injection"]["median_step_seconds"]
        assert results["injection_vs_bare_throughput"] == ratio
        # CUDA graphs need CUDA: only the other two ran; the encoders compiled whole.
        assert sorted(results["variants"]) == ["compiled", "fused"]
        for side in ("injection", "glue", "bare"):
            assert results["variants"]["fused"][side]["graphs"] == 0
            compiled = results["variants"]["compiled"][side]
            assert (compiled["graphs"], compiled["graph_breaks"]) == (1, 0)
            assert compiled["tokens_per_second"] > 0
    assert report["attention"] == {"injection": "sdpa", "glue": "sdpa", "bare": "sdpa"}
    assert "| 4 | 64 | injection |" in result.stdout
    assert "injection / bare encoder throughput" in result.stdout
    assert "| 4 | 64 | injection, compiled |" in result.stdout


def test_the_end_to_end_training_run_is_timed_batch_by_batch(tmp_path, tiny_bert):
    output = tmp_path / "train_run.json"
    command = [sys.executable, "benchmarks/train_run_benchmark.py", "--device", "cpu"]
    command += ["--model", tiny_bert, "--batch-sizes", "4", "--length", "64", "--batches", "3"]
    command += ["--warmup", "1", "--peak-tflops", "1", "--json", str(output)]
    result = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text())
    assert [(run["variant"], run["batch_size"]) for run in report["runs"]] == [
        ("shipped", 4),
        ("options", 4),
    ]
    for run in report["runs"]:
        # Three timed batches of 4 pairs cut to 64 wordpieces each.
        assert run["batches"] == 3
        assert run["tokens_per_second"] * run["seconds"] == pytest.approx(3 * 4 * 64)
        assert 0 < run["mfu"] < 1 and run["max_memory_allocated_gb"] is None
    assert "| 4 | options |" in result.stdout
