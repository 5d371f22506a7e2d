"""
Training speed on a CUDA GPU with mixed precision (issue: paper scale, "GPU path").

    python benchmarks/gpu_benchmark.py                    # all-MiniLM-L6-v2, batch 32, bf16/fp16
    python benchmarks/gpu_benchmark.py --model bert-base-uncased --batch-sizes 32 128 --steps 50

`benchmarks/gpu/run.sh` runs it on a random-init BERT-base at batch 32 and 128, length 128.

For each batch size, for the injection model of `training_configs/injection/tft.jsonnet`
(both heads, max pooling, elaborate features), the GLUE model of
`training_configs/glue/mrpc.jsonnet`, and a bare `AutoModelForSequenceClassification` of the
same checkpoint, it times forward + backward + Adam steps on identical batches of synthetic
pairs (the injection reader's instances and their wordpieces; with `--length`, each pair is
several clauses long and cut by the reader to exactly that many wordpieces), under
`torch.autocast` with bfloat16 where the GPU supports it (float16 with a gradient scaler
otherwise), after warm-up, with CUDA synchronisation around each step, and reports:

- tokens/s: real (unpadded) wordpieces per second;
- model FLOPs utilisation: 6 x parameters x tokens plus the attention's 12 x layers x hidden x
  length per token, per second, over the GPU's peak dense bf16/fp16 rate (`--peak-tflops`, or
  looked up from the device name);
- on a GPU, the step's memory: the peak of `torch.cuda.max_memory_allocated` during the steps
  less what was allocated before them (gradients, optimizer state, activations);
- the injection step's throughput relative to the bare encoder's.

`--variants` adds steps with the speed options, each against the same batches: `fused` (fused
AdamW), `compiled` (fused AdamW and the model compiled as `tft_compile_encoders` compiles it:
the injector's whole computation, the GLUE model's encoder; the bare model whole),
`cudagraphs` (the same with `mode="reduce-overhead"`: CUDA graphs, at batches of 128 or fewer,
whose steps the host's kernel launches bound); `--sides` picks the models and `--attention` the
attention implementation. The JSON is rewritten after each batch size, so that a run cut short
by a time limit keeps what it measured.

`--device cpu` runs the same measurement on the CPU (autocast to bfloat16; no MFU unless
`--peak-tflops` is given): the test suite does that with a tiny model so that this script
keeps working without a GPU.
"""

import argparse
import copy
import json
import os
import statistics
import sys
import tempfile
import time
from typing import List, Optional

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reader_benchmark import aligned_pairs, default_model, write_input  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
# Peak dense tensor-core rates in TFLOP/s (bf16 = fp16), by a substring of the device name (the
# first that matches): H100 SXM ("NVIDIA H100 80GB HBM3") and H200 989, H100 PCIe 756.
PEAK_TFLOPS = {
    "H200": 989.0,
    "H100 PCIe": 756.0,
    "H100": 989.0,
    "A100": 312.0,
    "L40S": 362.0,
    "A10G": 125.0,
    "V100": 125.0,
}


def write_long_input(path: str, count: int, clauses: int) -> None:
    """`count` aligned pairs, each `clauses` of `reader_benchmark`'s pairs joined end to end."""
    records = aligned_pairs(count * clauses)
    with open(path, "w", encoding="utf-8") as handle:
        for _ in range(count):
            joined = {key: [] for key in ("source", "target", "source_phrases", "target_phrases")}
            joined["alignments"] = []
            for _ in range(clauses):
                record = next(records)
                offsets = {side: len(joined[side]) for side in ("source", "target")}
                for side in ("source", "target"):
                    joined[side].extend(record[side])
                    joined[f"{side}_phrases"].extend(
                        [start + offsets[side], end + offsets[side]]
                        for start, end in record[f"{side}_phrases"]
                    )
                joined["alignments"].extend(
                    [
                        [s + offsets["source"], e + offsets["source"]],
                        [t + offsets["target"], u + offsets["target"]],
                    ]
                    for (s, e), (t, u) in record["alignments"]
                )
            handle.write(json.dumps(joined) + "\n")


def build(
    model_name: str,
    corpus: str,
    batch_sizes: List[int],
    length: Optional[int],
    attention: Optional[str] = None,
):
    """
    The injection and GLUE models of the configs, and for each batch size one batch of the
    injection reader's instances of `corpus` (indexed with the injection model's vocabulary;
    its sentence labels, 0 and 1, serve the two-class GLUE and bare models too).
    """
    os.environ["TFT_MODEL"] = model_name
    from allennlp.common import Params
    from allennlp.data import Batch, DatasetReader, Vocabulary
    from allennlp.models import Model

    import tft_allennlp  # noqa: F401

    overrides = {"dataset_reader.part": "all"}
    if length is not None:
        overrides["dataset_reader.max_length"] = length
    if attention is not None:
        overrides["model.text_field_embedder.token_embedders.tokens.attention"] = attention
    models, tensors = {}, {}
    for side, config in (("injection", "injection/tft.jsonnet"), ("glue", "glue/mrpc.jsonnet")):
        params = Params.from_file(
            os.path.join(ROOT, "training_configs", config), json.dumps(overrides)
        )
        vocab = Vocabulary.from_params(params.pop("vocabulary"), instances=[])
        models[side] = Model.from_params(vocab=vocab, params=params.pop("model"))
        if side == "injection":
            reader = DatasetReader.from_params(params.pop("dataset_reader"))
            instances = list(reader.read(corpus))
            for batch_size in batch_sizes:
                batch = Batch(instances[:batch_size])
                batch.index_instances(vocab)
                tensors[batch_size] = batch.as_tensor_dict()
    return models, tensors


def flops_per_step(model: torch.nn.Module, tokens: int, length: int, config) -> float:
    parameters = sum(p.numel() for p in model.parameters())
    attention = 12 * config.num_hidden_layers * config.hidden_size * length
    return (6 * parameters + attention) * tokens


def time_steps(
    model, loss_of, device, dtype, scaler, warmup: int, steps: int, fused: bool = False
) -> tuple:
    """
    The median seconds of `steps` training steps after `warmup` ones, and on a GPU the peak of
    `torch.cuda.max_memory_allocated` during them less what was allocated before them (the
    weights there already): gradients, optimizer state, activations, compiled graphs' buffers.
    """
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device)
    if fused:
        optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5, fused=True)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=5e-5)
    times = []
    for step in range(warmup + steps):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        started = time.perf_counter()
        optimizer.zero_grad()
        with torch.autocast(device.type, dtype=dtype):
            loss = loss_of(model)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        if step >= warmup:
            times.append(time.perf_counter() - started)
    peak = torch.cuda.max_memory_allocated(device) - before if device.type == "cuda" else None
    return statistics.median(times), peak


def encoder_of(side: str, model: torch.nn.Module) -> torch.nn.Module:
    """The transformer of a side's model (for its config), the bare model itself."""
    if side == "bare":
        return model
    return model._text_field_embedder.token_embedder_tokens.transformer_model


def compile_for(side: str, model: torch.nn.Module, backend: str, mode: Optional[str]) -> None:
    """Compiles a side in place as `tft_compile_encoders` does; the bare model whole."""
    from tft_allennlp.training.callbacks.compile_encoders import compile_in_place

    if side == "bare":
        model.compile(backend=backend, mode=mode)
    else:
        compile_in_place(model, backend=backend, mode=mode)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=None, help="default: all-MiniLM-L6-v2 from PyPI")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[32])
    parser.add_argument(
        "--length", type=int, default=None, help="wordpieces per pair (default: the pairs' own)"
    )
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--peak-tflops", type=float, default=None)
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument(
        "--variants", nargs="+", default=[], choices=["fused", "compiled", "cudagraphs"]
    )
    parser.add_argument("--sides", nargs="+", default=["injection", "glue", "bare"])
    parser.add_argument("--attention", default=None, choices=["sdpa", "eager"])
    parser.add_argument("--backend", default="inductor", help="torch.compile's backend")
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("gpu_benchmark: no CUDA device; run on a GPU machine (or --device cpu).")
    device = torch.device(args.device)
    model_name = args.model or default_model()
    if device.type == "cuda":
        dtype = (
            torch.bfloat16 if torch.cuda.get_device_capability(device) >= (8, 0) else torch.float16
        )
        name = torch.cuda.get_device_name(device)
        peak = args.peak_tflops or next((v for k, v in PEAK_TFLOPS.items() if k in name), None)
    else:
        dtype, name, peak = torch.bfloat16, "cpu", args.peak_tflops
    scaler = torch.amp.GradScaler(device.type, enabled=dtype == torch.float16)

    with tempfile.TemporaryDirectory() as directory:
        corpus = os.path.join(directory, "corpus.jsonl")
        if args.length is None:
            write_input("injection", corpus, max(args.batch_sizes))
        else:
            # About 16 wordpieces a clause and side: enough clauses to pass `length`.
            write_long_input(corpus, max(args.batch_sizes), clauses=args.length // 28 + 1)
        models, batches = build(model_name, corpus, args.batch_sizes, args.length, args.attention)
    from allennlp.nn.util import move_to_device
    from transformers import AutoModelForSequenceClassification

    from tft_allennlp.training.callbacks.compile_encoders import compile_counts

    models["bare"] = AutoModelForSequenceClassification.from_pretrained(
        model_name,
        num_labels=2,
        **({"attn_implementation": args.attention} if args.attention else {}),
    )
    models = {side: models[side] for side in args.sides}
    report = {"device": name, "dtype": str(dtype), "model": model_name, "peak_tflops": peak}
    report["attention"] = {
        side: encoder_of(side, m).config._attn_implementation for side, m in models.items()
    }
    report["batches"] = {}
    print(f"{name}, {dtype}, model {model_name}, {args.steps} timed steps after {args.warmup}")
    print(
        "| batch | length | step | median seconds | tokens/s | MFU | step memory GB |\n"
        "|---|---|---|---|---|---|---|"
    )
    for batch_size in args.batch_sizes:
        tensors = move_to_device(batches[batch_size], device)
        wordpieces = tensors["tokens"]["tokens"]
        real_tokens = int(wordpieces["mask"].sum())
        length = wordpieces["token_ids"].size(1)
        label = tensors["label"]
        losses = {
            "injection": lambda m: m(**tensors)["loss"],
            "glue": lambda m: m(tokens=tensors["tokens"], label=label)["loss"],
            "bare": lambda m: (
                m(
                    input_ids=wordpieces["token_ids"],
                    attention_mask=wordpieces["mask"].long(),
                    token_type_ids=wordpieces["type_ids"],
                    labels=label,
                ).loss
            ),
        }
        results = {"instances": int(label.size(0)), "length": length, "real_tokens": real_tokens}
        for side, model in models.items():
            model.to(device).train()
            seconds, memory = time_steps(
                model, losses[side], device, dtype, scaler, args.warmup, args.steps
            )
            flops = flops_per_step(model, real_tokens, length, encoder_of(side, model).config)
            results[side] = measured(seconds, real_tokens, flops, peak, memory)
            print(row(batch_size, length, side, results[side]))
            for variant in args.variants:
                if variant == "cudagraphs" and (device.type != "cuda" or batch_size > 128):
                    continue  # CUDA graphs pay where kernel launches bound the step
                fresh = copy.deepcopy(model)
                if variant != "fused":
                    mode = "reduce-overhead" if variant == "cudagraphs" else None
                    compile_for(side, fresh, args.backend, mode)
                before = compile_counts()
                seconds, memory = time_steps(
                    fresh, losses[side], device, dtype, scaler, args.warmup, args.steps, fused=True
                )
                after = compile_counts()
                result = measured(seconds, real_tokens, flops, peak, memory)
                result["graphs"] = after["graphs"] - before["graphs"]
                result["graph_breaks"] = after["graph_breaks"] - before["graph_breaks"]
                results.setdefault("variants", {}).setdefault(variant, {})[side] = result
                print(row(batch_size, length, f"{side}, {variant}", result))
                del fresh
                torch._dynamo.reset()
            model.to("cpu")
            if device.type == "cuda":
                torch.cuda.empty_cache()
        if "injection" not in results or "bare" not in results:
            report["batches"][str(batch_size)] = results
            write_report(args.json, report)
            continue
        results["injection_vs_bare_throughput"] = (
            results["bare"]["median_step_seconds"] / results["injection"]["median_step_seconds"]
        )
        print(
            f"| {batch_size} | {length} | injection / bare encoder throughput: "
            f"{results['injection_vs_bare_throughput']:.3f} | | | | |"
        )
        report["batches"][str(batch_size)] = results
        write_report(args.json, report)


def measured(
    seconds: float, tokens: int, flops: float, peak: Optional[float], memory: Optional[int] = None
) -> dict:
    return {
        "median_step_seconds": seconds,
        "tokens_per_second": tokens / seconds,
        "mfu": flops / seconds / (peak * 1e12) if peak else None,
        "step_memory_gb": memory / 2**30 if memory is not None else None,
    }


def row(batch_size: int, length: int, side: str, result: dict) -> str:
    mfu = f"{100 * result['mfu']:.1f}%" if result["mfu"] is not None else "n/a"
    memory = result["step_memory_gb"]
    memory = f"{memory:.2f}" if memory is not None else "n/a"
    seconds, tokens = result["median_step_seconds"], result["tokens_per_second"]
    return f"| {batch_size} | {length} | {side} | {seconds:.4f} | {tokens:.0f} | {mfu} | {memory} |"


def write_report(path: Optional[str], report: dict) -> None:
    if path:
        with open(path, "w") as out:
            json.dump(report, out, indent=2)


if __name__ == "__main__":
    main()
