"""
The plugin's encoder step with each attention implementation and compiled or not, side by side
in one process:

    python benchmarks/compile_benchmark.py [--model DIR] [--batch 32] [--steps 12] [--threads 1]
        [--backend inductor] [--device cpu]

A GLUE step as the plugin takes it (the `tft_pretrained_transformer` embedder's first-token path,
a linear layer, cross-entropy, backward, AdamW) on batches of MRPC-like lengths (44-64
wordpieces, some padded), for four sides: SDPA and eager attention, eager; SDPA, compiled with
`torch.compile` as the `tft_compile_encoders` callback compiles it; and SDPA, compiled with
`dynamic=True`. The sides take the same batches in a rotating order. Reported: each side's first
step (for a compiled side, most of it compiling), the compiles and graph breaks dynamo counted,
and the median step after the lengths have all been seen once, with its ratio to eager SDPA.
"""

import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reader_benchmark import default_model  # noqa: E402


def build(model: str, attention: str, device: torch.device):
    from allennlp.common import Params
    from allennlp.modules.token_embedders import TokenEmbedder

    import tft_allennlp  # noqa: F401 (registers the embedder)

    torch.manual_seed(0)
    embedder = TokenEmbedder.from_params(
        Params({"type": "tft_pretrained_transformer", "model_name": model, "attention": attention})
    ).to(device)
    head = torch.nn.Linear(embedder.get_output_dim(), 2).to(device)
    parameters = list(embedder.parameters()) + list(head.parameters())
    optimizer = torch.optim.AdamW(
        parameters, lr=1e-5, fused=True if device.type == "cuda" else None
    )
    return embedder, head, optimizer


def batches(size: int, vocabulary: int, device: torch.device, count: int):
    generator = torch.Generator().manual_seed(1)
    lengths = [44, 48, 52, 56, 60, 64]
    for step in range(count):
        length = lengths[step % len(lengths)]
        ids = torch.randint(1000, vocabulary, (size, length), generator=generator)
        mask = torch.ones(size, length, dtype=torch.bool)
        for row in range(0, size, 4):
            mask[row, length - 1 - row % 7 :] = False
        types = torch.zeros(size, length, dtype=torch.long)
        types[:, length // 2 :] = 1
        labels = torch.randint(0, 2, (size,), generator=generator)
        yield [t.to(device) for t in (ids, mask, types, labels)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="default: all-MiniLM-L6-v2 from PyPI")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--backend", default="inductor")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    if args.steps <= 6:
        parser.error("--steps must be 7 or more: medians are taken once every length has run")
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    model = args.model or default_model()
    from tft_allennlp.training.callbacks.compile_encoders import compile_counts

    sides = {}
    for name, attention, compiled, dynamic in [
        ("sdpa, eager", "sdpa", False, None),
        ("eager attention, eager", "eager", False, None),
        ("sdpa, compiled", "sdpa", True, None),
        ("sdpa, compiled, dynamic", "sdpa", True, True),
    ]:
        embedder, head, optimizer = build(model, attention, device)
        if compiled:
            embedder.compile(backend=args.backend, dynamic=dynamic)
        sides[name] = {"parts": (embedder, head, optimizer), "times": [], "graphs": 0, "breaks": 0}
    vocabulary = sides["sdpa, eager"]["parts"][0].transformer_model.config.vocab_size
    for step, (ids, mask, types, labels) in enumerate(
        batches(args.batch, vocabulary, device, args.steps)
    ):
        names = list(sides)
        order = names[step % len(names) :] + names[: step % len(names)]
        for name in order:
            embedder, head, optimizer = sides[name]["parts"]
            before = compile_counts()
            if device.type == "cuda":
                torch.cuda.synchronize()
            started = time.perf_counter()
            first = embedder(ids, mask, type_ids=types, first_token_only=True)[:, 0]
            loss = torch.nn.functional.cross_entropy(head(first), labels)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if device.type == "cuda":
                torch.cuda.synchronize()
            sides[name]["times"].append(time.perf_counter() - started)
            after = compile_counts()
            sides[name]["graphs"] += after["graphs"] - before["graphs"]
            sides[name]["breaks"] += after["graph_breaks"] - before["graph_breaks"]
        print(f"step {step} done", flush=True)
    seen = 6  # every length once
    reference = statistics.median(sides["sdpa, eager"]["times"][seen:])
    print(
        f"\n{args.device}, batch {args.batch}, {args.threads} thread(s), {args.steps} steps, "
        f"backend {args.backend}, {os.path.basename(model.rstrip('/'))}\n"
    )
    print("| side | first step s | compiles | graph breaks | median step s | vs sdpa, eager |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, side in sides.items():
        median = statistics.median(side["times"][seen:])
        print(
            f"| {name} | {side['times'][0]:.2f} | {side['graphs']} | {side['breaks']} | "
            f"{median:.3f} | {reference / median:.2f}x |"
        )


if __name__ == "__main__":
    main()
