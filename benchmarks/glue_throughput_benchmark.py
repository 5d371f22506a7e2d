"""
GLUE fine-tuning throughput of `allennlp train` against the plain PyTorch + transformers loop a
user would otherwise write (issue: paper scale, "Faster steps").

    GLUE_DIR=../shared/data/glue python benchmarks/glue_throughput_benchmark.py --task mrpc \
        --train-size 1000 --rounds 2

Both sides fine-tune the same model (default all-MiniLM-L6-v2) on the same `--train-size`
examples (the GLUE reader's seeded subsample, `seed` 13370, which the loop reproduces), with
batch 32, max length 128 (longest-first truncation), AdamW (lr `--lr`, weight decay 0.01 except
biases and LayerNorm weights), linear warmup over 10% then linear decay, gradient clipping at 1,
for `--epochs` epochs, each in a fresh process with `--threads` threads:

- plugin: `allennlp train training_configs/glue/<task>.jsonnet` (the config's own data loading:
  `tft_streaming`, length-bucketed; `--no-bucket` turns bucketing off), without validation;
  the time is AllenNLP's `training_duration` (all epochs, data loading included);
- loop: `AutoModelForSequenceClassification`, the examples read and tokenized with the
  tokenizer's pair encoding, shuffled, batches padded to their longest example
  (`DataCollatorWithPadding`); the time runs from reading the file to the end of the epochs.

Examples/s = examples x epochs / time. The sides alternate for `--rounds` rounds and the ratio is
taken on the medians. Afterwards (untimed) each side's last model is scored on the dev file.
"""

import argparse
import csv
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reader_benchmark import default_model  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def read_examples(task: str, path: str):
    """(sentence1, sentence2, label) rows of a GLUE TSV, as the plugin's task table defines them."""
    from tft_allennlp.common.glue_tasks import get_glue_task

    spec = get_glue_task(task)
    with open(path, encoding="utf-8-sig") as handle:
        rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    header, rows = rows[0], rows[1:]
    at = {name: i for i, name in enumerate(header)}
    return [(row[at[spec.sentence1]], row[at[spec.sentence2]], row[at[spec.label]]) for row in rows]


def plain_loop(args) -> dict:
    """The loop a user writes with transformers; returns examples/s and dev metrics."""
    import torch
    from sklearn.metrics import f1_score
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        DataCollatorWithPadding,
        get_linear_schedule_with_warmup,
    )

    torch.manual_seed(args.seed)
    model_name = args.model or default_model()
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    model = AutoModelForSequenceClassification.from_pretrained(model_name, num_labels=2)
    collate = DataCollatorWithPadding(tokenizer)
    task_dir = os.path.join(args.glue_dir, args.directory)

    def encode(examples):
        return [
            {**tokenizer(a, b, truncation=True, max_length=128), "labels": int(label)}
            for a, b, label in examples
        ]

    started = time.perf_counter()
    rows = read_examples(args.task, os.path.join(task_dir, "train.tsv"))
    # The GLUE reader's subsample: the same positions `random.Random(seed).sample` draws.
    chosen = sorted(random.Random(13370).sample(range(len(rows)), args.train_size))
    train = encode([rows[i] for i in chosen])
    no_decay = ("bias", "LayerNorm.weight")
    groups = [
        {
            "params": [p for n, p in model.named_parameters() if not n.endswith(no_decay)],
            "weight_decay": 0.01,
        },
        {
            "params": [p for n, p in model.named_parameters() if n.endswith(no_decay)],
            "weight_decay": 0.0,
        },
    ]
    optimizer = torch.optim.AdamW(groups, lr=args.lr)
    steps = args.epochs * -(-len(train) // 32)
    schedule = get_linear_schedule_with_warmup(optimizer, -(-steps // 10), steps)
    model.train()
    rng = random.Random(args.seed)
    for _ in range(args.epochs):
        order = list(range(len(train)))
        rng.shuffle(order)
        for start in range(0, len(order), 32):
            batch = collate([train[i] for i in order[start : start + 32]])
            loss = model(**batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
    seconds = time.perf_counter() - started

    model.eval()
    dev = read_examples(args.task, os.path.join(task_dir, "dev.tsv"))
    encoded = encode(dev)
    predictions = []
    with torch.no_grad():
        for start in range(0, len(encoded), 64):
            predictions += model(**collate(encoded[start : start + 64])).logits.argmax(-1).tolist()
    gold = [int(label) for _, _, label in dev]
    accuracy = sum(p == g for p, g in zip(predictions, gold)) / len(gold)
    return {
        "seconds": seconds,
        "examples_per_second": len(train) * args.epochs / seconds,
        "dev_accuracy": accuracy,
        "dev_f1": f1_score(gold, predictions),
    }


def plugin(args) -> dict:
    """`allennlp train` of the task's config without validation, then `allennlp evaluate`."""
    overrides = {
        "dataset_reader.train_size": args.train_size,
        "trainer.num_epochs": args.epochs,
        "trainer.optimizer.lr": args.lr,
        "validation_data_path": None,
        "random_seed": args.seed,
        "numpy_seed": args.seed,
        "pytorch_seed": args.seed,
    }
    if args.no_bucket:
        overrides["data_loader.bucket_batches"] = 0
    environment = {
        **os.environ,
        "TFT_MODEL": args.model or default_model(),
        "GLUE_DIR": args.glue_dir,
    }
    config = os.path.join(ROOT, "training_configs/glue", f"{args.task}.jsonnet")
    with tempfile.TemporaryDirectory() as directory:
        run = os.path.join(directory, "run")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "allennlp",
                "train",
                config,
                "-s",
                run,
                "--include-package",
                "tft_allennlp",
                "-o",
                json.dumps(overrides),
            ],
            cwd=ROOT,
            env=environment,
            check=True,
            capture_output=True,
        )
        metrics = json.load(open(os.path.join(run, "metrics.json")))
        hours, minutes, seconds = metrics["training_duration"].split(":")
        seconds = 3600 * int(hours) + 60 * int(minutes) + float(seconds)
        dev = os.path.join(args.glue_dir, args.directory, "dev.tsv")
        scores = os.path.join(directory, "dev.json")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "allennlp",
                "evaluate",
                os.path.join(run, "model.tar.gz"),
                dev,
                "--output-file",
                scores,
                "--include-package",
                "tft_allennlp",
            ],
            cwd=ROOT,
            env=environment,
            check=True,
            capture_output=True,
        )
        dev_metrics = json.load(open(scores))
    return {
        "seconds": seconds,
        "examples_per_second": args.train_size * args.epochs / seconds,
        "dev_accuracy": dev_metrics["accuracy"],
        "dev_f1": dev_metrics["f1"],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default="mrpc", choices=["mrpc"])
    parser.add_argument(
        "--glue-dir", default=os.environ.get("GLUE_DIR", os.path.join(ROOT, "../shared/data/glue"))
    )
    parser.add_argument("--model", default=None, help="default: all-MiniLM-L6-v2 from PyPI")
    parser.add_argument("--train-size", type=int, default=1000)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--no-bucket", action="store_true", help="plugin without length bucketing")
    parser.add_argument("--side", choices=["plain", "plugin"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.directory = {"mrpc": "MRPC"}[args.task]
    if args.side:
        import torch

        torch.set_num_threads(args.threads)
        print("RESULT", json.dumps(plain_loop(args) if args.side == "plain" else plugin(args)))
        return
    results = {"plain": [], "plugin": []}
    passed = [a for a in sys.argv[1:]]
    environment = {
        **os.environ,
        "OMP_NUM_THREADS": str(args.threads),
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    print(
        f"{args.task.upper()} {args.train_size} examples, {args.epochs} epoch(s), batch 32, "
        f"{args.threads} threads, lr {args.lr}, bucketing {'off' if args.no_bucket else 'on'}"
    )
    print("| round | side | seconds | examples/s | dev acc | dev F1 |\n|---|---|---|---|---|---|")
    for round_number in range(1, args.rounds + 1):
        for side in ("plain", "plugin"):
            output = subprocess.run(
                [sys.executable, __file__, *passed, "--side", side],
                env=environment,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            result = json.loads(output.split("RESULT", 1)[1])
            results[side].append(result)
            print(
                f"| {round_number} | {side} | {result['seconds']:.1f} "
                f"| {result['examples_per_second']:.1f} | "
                f"{100 * result['dev_accuracy']:.1f} | {100 * result['dev_f1']:.1f} |",
                flush=True,
            )
    medians = {
        side: statistics.median(r["examples_per_second"] for r in rs)
        for side, rs in results.items()
    }
    print(f"\nplugin / plain loop throughput (medians): {medians['plugin'] / medians['plain']:.2f}")


if __name__ == "__main__":
    main()
