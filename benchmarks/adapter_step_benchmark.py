"""
Step time and training memory of full fine-tuning, bottleneck adapters and LoRA (issue 73),
side by side on identical batches.

    GLUE_DIR=../shared/data/glue OMP_NUM_THREADS=1 python benchmarks/adapter_step_benchmark.py \
        --task mrpc --batch-size 32 --steps 12

Three models are built from the shipped configs of one task (`glue/TASK.jsonnet`,
`adapters/TASK_houlsby.jsonnet`, `lora/TASK.jsonnet`; default model all-MiniLM-L6-v2) with the
same seed, each with its config's optimizer over the parameters it trains (its own learning
rate and parameter groups). A step is zero_grad, forward, backward and the optimizer's step on a
batch of the first training pairs of `$GLUE_DIR/TASK/train.tsv`, read by the config's reader.
In each round the three take the same batch, in an order that rotates from round to round;
after `--warmup` rounds, each one's median step time against full fine-tuning's is its cost.

Training memory: each strategy runs the same steps again in a fresh child process, whose peak
resident memory is reset (`/proc/self/clear_refs`) once the model, the batches and the
optimizer are built; the peak during the steps minus the resident memory before them is what
training adds (gradients, optimizer state, activations kept for the backward pass).
"""

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reader_benchmark import default_model  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CONFIGS = {
    "full fine-tuning": "training_configs/glue/{task}.jsonnet",
    "Houlsby adapters": "training_configs/adapters/{task}_houlsby.jsonnet",
    "LoRA": "training_configs/lora/{task}.jsonnet",
}
GLUE_FOLDERS = {"mrpc": "MRPC", "stsb": "STS-B"}


def build(name: str, task: str, model_name: str, train_file: str, batch_size: int, batches: int):
    """One strategy's model, its optimizer and `batches` tensor batches of `batch_size` pairs."""
    os.environ["TFT_MODEL"] = model_name
    from allennlp.common import Params
    from allennlp.data import Batch, DatasetReader, Vocabulary
    from allennlp.models import Model
    from allennlp.training.optimizers import Optimizer

    import tft_allennlp  # noqa: F401

    params = Params.from_file(os.path.join(ROOT, CONFIGS[name].format(task=task)))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(itertools.islice(reader.read(train_file), batch_size * batches))
    vocab = Vocabulary.from_params(params.pop("vocabulary"), instances=instances)
    torch.manual_seed(0)
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    trained = [[n, p] for n, p in model.named_parameters() if p.requires_grad]
    optimizer = Optimizer.from_params(
        model_parameters=trained, params=params.pop("trainer").pop("optimizer")
    )
    tensors = []
    for start in range(0, len(instances), batch_size):
        batch = Batch(instances[start : start + batch_size])
        batch.index_instances(vocab)
        tensors.append(batch.as_tensor_dict())
    model.train()
    return model, optimizer, tensors


def step(model, optimizer, tensors) -> None:
    optimizer.zero_grad()
    model(**tensors)["loss"].backward()
    optimizer.step()


def resident_mb(field: str) -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"/proc/self/status has no {field}")


def memory_child(args: argparse.Namespace, model_name: str, train_file: str) -> None:
    """Runs in a child process: prints the training memory of `args.only` as JSON."""
    rounds = args.warmup + args.steps
    model, optimizer, batches = build(
        args.only, args.task, model_name, train_file, args.batch_size, rounds
    )
    before = resident_mb("VmRSS")
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # resets VmHWM, the peak resident memory, to the current one
    for tensors in batches:
        step(model, optimizer, tensors)
    print(json.dumps({"before_mb": before, "peak_mb": resident_mb("VmHWM")}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=None, help="default: all-MiniLM-L6-v2 from PyPI")
    parser.add_argument("--glue-dir", default=os.environ.get("GLUE_DIR", "glue_data"))
    parser.add_argument("--task", choices=sorted(GLUE_FOLDERS), default="mrpc")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps", type=int, default=12, help="timed rounds")
    parser.add_argument("--warmup", type=int, default=2, help="untimed rounds first")
    parser.add_argument("--only", choices=sorted(CONFIGS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    model_name = args.model or default_model()
    train_file = os.path.join(args.glue_dir, GLUE_FOLDERS[args.task], "train.tsv")
    if args.only:
        memory_child(args, model_name, train_file)
        return

    rounds = args.warmup + args.steps
    built = {
        name: build(name, args.task, model_name, train_file, args.batch_size, rounds)
        for name in CONFIGS
    }
    names = list(built)
    batches = built[names[0]][2]
    times: dict = {name: [] for name in names}
    for index in range(rounds):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            model, optimizer, tensors = built[name]
            started = time.perf_counter()
            step(model, optimizer, tensors[index])
            if index >= args.warmup:
                times[name].append(time.perf_counter() - started)
    trained = {
        name: sum(p.numel() for p in model.parameters() if p.requires_grad)
        for name, (model, _, _) in built.items()
    }
    del built

    memory = {}
    for name in names:
        command = [sys.executable, os.path.abspath(__file__), *sys.argv[1:], "--only", name]
        if not args.model:
            command += ["--model", model_name]
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        memory[name] = json.loads(output.strip().splitlines()[-1])

    lengths = [tuple(b["tokens"]["tokens"]["token_ids"].shape)[1] for b in batches]
    medians = {name: statistics.median(values) for name, values in times.items()}
    base = names[0]
    added = {name: m["peak_mb"] - m["before_mb"] for name, m in memory.items()}
    print(
        f"model {model_name}, {args.task} batches of {args.batch_size} pairs "
        f"({min(lengths)}-{max(lengths)} wordpieces), {args.steps} timed steps each after "
        f"{args.warmup} warm-up, {torch.get_num_threads()} threads"
    )
    print(
        "| strategy | trained parameters | median step (s) | step (x full) "
        "| memory training adds (MB) | (x full) |\n|---|---|---|---|---|---|"
    )
    for name in names:
        print(
            f"| {name} | {trained[name]:,} | {medians[name]:.3f} | "
            f"{medians[name] / medians[base]:.2f} | {added[name]:.0f} | "
            f"{added[name] / added[base]:.2f} |"
        )


if __name__ == "__main__":
    main()
