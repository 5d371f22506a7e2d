"""
`allennlp train` of the injection config end to end, timed by the trainer batch by batch.

    python benchmarks/train_run_benchmark.py --model DIR --batch-sizes 100 256 --batches 20

For each batch size and variant, one `allennlp train training_configs/injection/tft.jsonnet`
in a fresh process on synthetic aligned pairs cut to `--length` wordpieces, in mixed precision
(`tft_mixed_precision`, bfloat16 where the GPU has it; bfloat16 on the CPU), for exactly
`--warmup` + `--batches` batches of one epoch, no validation. `benchmark_batch_timer`
(`benchmarks/batch_timer.py`) records the end of each batch after the trainer's optimizer step,
with CUDA synchronised: data loading, the forward and backward passes, the step, metrics and the
progress bar all count, as in a real run. It reports real (unpadded) wordpieces per second, model
FLOPs utilisation as `gpu_benchmark.py` counts it (6 x parameters + 12 x layers x hidden x
length per wordpiece, over the GPU's peak dense rate) and the peak of
`torch.cuda.max_memory_allocated`. The run ends after its last timed batch (no checkpoint, no
archive: not what is measured).

Variants: `shipped` (the config as it is: AllenNLP's Adam), `options` (fused AdamW, `tft_adamw`,
and batches copied from page-locked memory without waiting, `data_loader.pin_memory`),
`compiled` (`options` and `tft_compile_encoders`: the injector's whole computation compiled).
`benchmarks/gpu/run.sh` runs `shipped` and `options` at batch 100 and 256 on a random-init
BERT-base. The JSON is rewritten after each run.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from typing import Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_benchmark import PEAK_TFLOPS, write_long_input  # noqa: E402
from reader_benchmark import default_model  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CONFIG = os.path.join(ROOT, "training_configs/injection/tft.jsonnet")
VARIANTS = ("shipped", "options", "compiled")


def overrides_for(variant: str, batch_size: int, length: int, cuda: bool, timer: dict) -> dict:
    from allennlp.common import Params

    callbacks = Params.from_file(CONFIG).as_dict()["trainer"]["callbacks"]
    overrides = {
        "dataset_reader.part": "all",
        "dataset_reader.max_length": length,
        "validation_data_path": None,
        "data_loader.batch_size": batch_size,
        "data_loader.batches_per_epoch": timer["warmup"] + timer["batches"],
        "trainer.num_epochs": 1,
        "trainer.cuda_device": 0 if cuda else -1,
        "trainer.type": "tft_mixed_precision",
        "trainer.precision": "auto" if cuda else "bfloat16",
        "trainer.callbacks": [*callbacks, {"type": "benchmark_batch_timer", **timer}],
    }
    if variant in ("options", "compiled"):
        overrides["trainer.optimizer"] = {"type": "tft_adamw", "lr": 5e-5}
        overrides["data_loader.pin_memory"] = True
    if variant == "compiled":
        overrides["trainer.callbacks"].append({"type": "tft_compile_encoders"})
    return overrides


def run_one(args, variant: str, batch_size: int, directory: str, cuda: bool) -> dict:
    corpus = os.path.join(directory, f"corpus_{batch_size}.jsonl")
    if not os.path.exists(corpus):
        # The paper's sampler gives each pair a random partner: two instances a pair; the data
        # restarts if the epoch's batches need more.
        pairs = (args.warmup + args.batches) * batch_size // 2 + batch_size
        write_long_input(corpus, pairs, clauses=args.length // 28 + 1)
    timer = {
        "path": os.path.join(directory, "timer.json"),
        "batches": args.batches,
        "warmup": args.warmup,
    }
    # The config's variables, for reading its callbacks here.
    os.environ.update({"TFT_MODEL": args.model, "TFT_PARAPHRASE_CORPUS": corpus})
    overrides = overrides_for(variant, batch_size, args.length, cuda, timer)
    run = os.path.join(directory, f"run_{variant}_{batch_size}")
    environment = {
        **os.environ,
        "TFT_MODEL": args.model,
        "TFT_PARAPHRASE_CORPUS": corpus,
        "PYTHONPATH": os.pathsep.join(
            [os.path.dirname(os.path.abspath(__file__)), ROOT, os.environ.get("PYTHONPATH", "")]
        ),
    }
    command = [sys.executable, "-m", "allennlp", "train", CONFIG, "-s", run]
    command += ["--include-package", "tft_allennlp", "--include-package", "batch_timer"]
    command += ["-o", json.dumps(overrides)]
    completed = subprocess.run(
        command, env=environment, cwd=ROOT, capture_output=True, text=True, timeout=args.timeout
    )
    if completed.returncode != 0 or not os.path.exists(timer["path"]):
        raise SystemExit(
            f"train_run_benchmark: {variant} at batch {batch_size} failed "
            f"(exit {completed.returncode}):\n{completed.stderr[-3000:]}"
        )
    with open(timer["path"], encoding="utf-8") as handle:
        timed = json.load(handle)
    os.remove(timer["path"])
    return timed


def summary(timed: dict, peak: Optional[float]) -> dict:
    """Wordpieces/s, MFU and the peak memory of one timed run."""
    seconds = timed["seconds"]
    tokens = sum(timed["tokens"])
    flops = sum(
        (6 * timed["parameters"] + 12 * timed["layers"] * timed["hidden"] * length) * count
        for count, length in zip(timed["tokens"], timed["lengths"])
    )
    return {
        "batches": len(timed["batch_seconds"]),
        "seconds": seconds,
        "median_batch_seconds": sorted(timed["batch_seconds"])[len(timed["batch_seconds"]) // 2],
        "tokens_per_second": tokens / seconds,
        "mfu": flops / seconds / (peak * 1e12) if peak else None,
        "max_memory_allocated_gb": (
            timed["max_memory_allocated"] / 2**30 if timed["max_memory_allocated"] else None
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=None, help="default: all-MiniLM-L6-v2 from PyPI")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[100])
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--batches", type=int, default=20, help="timed batches")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--variants", nargs="+", default=["shipped", "options"], choices=VARIANTS)
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--peak-tflops", type=float, default=None)
    parser.add_argument("--timeout", type=float, default=600, help="seconds for one run")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    args.model = args.model or default_model()
    import torch

    cuda = args.device == "cuda"
    if cuda and not torch.cuda.is_available():
        sys.exit("train_run_benchmark: no CUDA device; run on a GPU machine (or --device cpu).")
    name = torch.cuda.get_device_name(0) if cuda else "cpu"
    peak = args.peak_tflops or next((v for k, v in PEAK_TFLOPS.items() if k in name), None)
    report = {"device": name, "model": args.model, "length": args.length, "peak_tflops": peak}
    report["runs"] = []
    print(f"{name}, model {args.model}, {args.batches} timed batches after {args.warmup}")
    print("| batch | variant | median batch s | wordpieces/s | MFU | peak GB |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="train_run_") as directory:
        for batch_size in args.batch_sizes:
            for variant in args.variants:
                result = summary(run_one(args, variant, batch_size, directory, cuda), peak)
                report["runs"].append({"batch_size": batch_size, "variant": variant, **result})
                mfu = f"{100 * result['mfu']:.1f}%" if result["mfu"] is not None else "n/a"
                memory = result["max_memory_allocated_gb"]
                shown = f"{memory:.1f}" if memory is not None else "n/a"
                print(
                    f"| {batch_size} | {variant} | {result['median_batch_seconds']:.4f} | "
                    f"{result['tokens_per_second']:.0f} | {mfu} | {shown} |",
                    flush=True,
                )
                if args.json:
                    with open(args.json, "w", encoding="utf-8") as handle:
                        json.dump(report, handle, indent=2)


if __name__ == "__main__":
    main()
