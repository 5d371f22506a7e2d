"""
Training speed on a CUDA GPU with mixed precision (issue: paper scale, "GPU path").

    python benchmarks/gpu_benchmark.py                    # all-MiniLM-L6-v2, batch 32, bf16/fp16
    python benchmarks/gpu_benchmark.py --model bert-base-uncased --batch-size 64 --steps 50

For the injection model of `training_configs/injection/tft.jsonnet` (both heads, max pooling,
elaborate features), the GLUE model of `training_configs/glue/mrpc.jsonnet`, and a bare
`AutoModelForSequenceClassification` of the same checkpoint, it times forward + backward +
Adam steps on identical batches of synthetic pairs (the injection reader's instances and
their wordpieces), under `torch.autocast` with bfloat16 where the GPU supports it (float16 with
a gradient scaler otherwise), after warm-up, with CUDA synchronisation around each step, and
reports:

- tokens/s: real (unpadded) wordpieces per second;
- model FLOPs utilisation: 6 x parameters x tokens plus the attention's 12 x layers x hidden x
  length per token, per second, over the GPU's peak dense bf16/fp16 rate (`--peak-tflops`, or
  looked up from the device name);
- the injection step's throughput relative to the bare encoder's.

`--device cpu` runs the same measurement on the CPU (autocast to bfloat16; no MFU unless
`--peak-tflops` is given): the test suite does that with a tiny model so that this script
keeps working without a GPU.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reader_benchmark import default_model, write_input  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
# Peak dense tensor-core rates in TFLOP/s (bf16 = fp16), by a substring of the device name.
PEAK_TFLOPS = {
    "H200": 989.0,
    "H100": 989.0,
    "A100": 312.0,
    "L40S": 362.0,
    "A10G": 125.0,
    "V100": 125.0,
}


def build(model_name: str, corpus: str, instances: int):
    """
    The injection and GLUE models of the configs, and one batch of the injection reader's
    instances of `corpus` (indexed with the injection model's vocabulary; its sentence labels,
    0 and 1, serve the two-class GLUE and bare models too).
    """
    os.environ["TFT_MODEL"] = model_name
    from allennlp.common import Params
    from allennlp.data import Batch, DatasetReader, Vocabulary
    from allennlp.models import Model

    import tft_allennlp  # noqa: F401

    models, tensors = {}, None
    for side, config in (("injection", "injection/tft.jsonnet"), ("glue", "glue/mrpc.jsonnet")):
        params = Params.from_file(
            os.path.join(ROOT, "training_configs", config), '{"dataset_reader.part": "all"}'
        )
        vocab = Vocabulary.from_params(params.pop("vocabulary"), instances=[])
        models[side] = Model.from_params(vocab=vocab, params=params.pop("model"))
        if side == "injection":
            reader = DatasetReader.from_params(params.pop("dataset_reader"))
            batch = Batch(list(reader.read(corpus))[:instances])
            batch.index_instances(vocab)
            tensors = batch.as_tensor_dict()
    return models, tensors


def flops_per_step(model: torch.nn.Module, tokens: int, length: int, config) -> float:
    parameters = sum(p.numel() for p in model.parameters())
    attention = 12 * config.num_hidden_layers * config.hidden_size * length
    return (6 * parameters + attention) * tokens


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=None, help="default: all-MiniLM-L6-v2 from PyPI")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--peak-tflops", type=float, default=None)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("gpu_benchmark: no CUDA device; run on a GPU machine (or --device cpu).")
    device = torch.device(args.device)
    model_name = args.model or default_model()
    if device.type == "cuda":
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        name = torch.cuda.get_device_name(device)
        peak = args.peak_tflops or next((v for k, v in PEAK_TFLOPS.items() if k in name), None)
    else:
        dtype, name, peak = torch.bfloat16, "cpu", args.peak_tflops
    scaler = torch.amp.GradScaler(device.type, enabled=dtype == torch.float16)

    with tempfile.TemporaryDirectory() as directory:
        corpus = os.path.join(directory, "corpus.jsonl")
        write_input("injection", corpus, args.batch_size)
        models, tensors = build(model_name, corpus, args.batch_size)
    from allennlp.nn.util import move_to_device
    from transformers import AutoModelForSequenceClassification

    models["bare"] = AutoModelForSequenceClassification.from_pretrained(model_name, num_labels=2)
    tensors = move_to_device(tensors, device)
    wordpieces = tensors["tokens"]["tokens"]
    real_tokens = int(wordpieces["mask"].sum())
    length = wordpieces["token_ids"].size(1)
    label = tensors["label"]
    inputs = {
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
    results = {}
    for side, model in models.items():
        model.to(device).train()
        optimizer = torch.optim.Adam(model.parameters(), lr=5e-5)
        times = []
        for step in range(args.warmup + args.steps):
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            started = time.perf_counter()
            optimizer.zero_grad()
            with torch.autocast(device.type, dtype=dtype):
                loss = inputs[side](model)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            if step >= args.warmup:
                times.append(time.perf_counter() - started)
        seconds = statistics.median(times)
        encoder = (
            model._text_field_embedder.token_embedder_tokens.transformer_model
            if side != "bare"
            else model
        )
        flops = flops_per_step(model, real_tokens, length, encoder.config)
        results[side] = {
            "median_step_seconds": seconds,
            "tokens_per_second": real_tokens / seconds,
            "mfu": flops / seconds / (peak * 1e12) if peak else None,
        }
        model.to("cpu")
    results["injection_vs_bare_throughput"] = (
        results["bare"]["median_step_seconds"] / results["injection"]["median_step_seconds"]
    )
    print(
        f"{name}, {dtype}, model {model_name}, batch {args.batch_size} x {length} wordpieces "
        f"({real_tokens} real), {args.steps} timed steps after {args.warmup}"
    )
    print("| step | median seconds | tokens/s | MFU |\n|---|---|---|---|")
    for side in ("injection", "glue", "bare"):
        r = results[side]
        mfu = f"{100 * r['mfu']:.1f}%" if r["mfu"] is not None else "n/a"
        print(f"| {side} | {r['median_step_seconds']:.4f} | {r['tokens_per_second']:.0f} | {mfu} |")
    print(f"\ninjection / bare encoder throughput: {results['injection_vs_bare_throughput']:.3f}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"device": name, "dtype": str(dtype), **results}, out, indent=2)


if __name__ == "__main__":
    main()
