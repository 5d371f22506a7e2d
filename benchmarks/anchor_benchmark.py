"""
The plugin against what an experienced user would pick instead, side by side in one run.

    GLUE_DIR=../shared/data/glue python benchmarks/anchor_benchmark.py train --task mrpc \
        --train-size 1000 --rounds 5
    GLUE_DIR=../shared/data/glue python benchmarks/anchor_benchmark.py predict --pairs 1000 \
        --batch-sizes 1 64 --rounds 3
    GLUE_DIR=../shared/data/glue python benchmarks/anchor_benchmark.py padding --task stsb

`train`: `allennlp train training_configs/glue/<task>.jsonnet` against the Hugging Face
`Trainer` with `group_by_length=True` and dynamic padding (`DataCollatorWithPadding`), both
fine-tuning the same model (default all-MiniLM-L6-v2) on the same `--train-size` examples (the
GLUE reader's seeded subsample, which the Trainer side reproduces), with batch 32, max length
128, AdamW (lr `--lr`, weight decay 0.01 except biases and LayerNorm weights), linear warmup over
10% then linear decay, gradient clipping at 1, `--epochs` epochs, `--threads` threads, each run
in a fresh process. Time runs from reading the training file to the end of the last epoch
(AllenNLP's `training_duration`, which reads and tokenizes lazily inside the loop; for the
Trainer: reading, tokenizing, building the `Trainer` and `train()`), so imports and model
loading are left out on both sides. Peak RSS is each whole process's (`ru_maxrss`). With
`--baseline-tree DIR` a third side runs `allennlp train` with the plugin and configs of another
checkout (e.g. the main branch: "before"). The sides alternate, in a rotating order, for
`--rounds` rounds; ratios are taken on the medians. Each side's model is scored on the dev file
after its first round only (untimed; the seed fixes the run, so later rounds repeat it).

`predict`: `allennlp predict` (the command's own code path: `_get_predictor` then
`_PredictManager.run`, in-process so that start-up is timed apart) against a plain batched
forward pass with transformers, sorted by length, on `--pairs` real MRPC training pairs, one
thread, the same weights (an archive trained here first on 200 other pairs). The plain pass
reads the JSON lines, tokenizes, sorts all pairs by length, pads each batch to its longest pair,
runs the encoder, the [CLS] vector and the linear layer, softmax, and writes the labels and
probabilities in input order. Start-up (imports, loading the model) is reported separately.
Both sides' labels are compared.

`padding`: padded wordpieces per real wordpiece in the batches of one epoch over the task's
`--train-size` examples (the config's reader and `tft_streaming`'s own batching; mean of 10
shufflings), for random batches, `tft_streaming`'s default bucketing, the GLUE configs' and the
`Trainer`'s `group_by_length`, and the standard deviation of a batch's mean label.
"""

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from glue_throughput_benchmark import read_examples  # noqa: E402
from reader_benchmark import default_model  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DIRECTORIES = {"mrpc": "MRPC", "stsb": "STS-B"}


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_child(command: List[str], environment: Dict[str, str], cwd: str = ROOT) -> tuple:
    """Runs `command`; returns (stdout, peak RSS of that process in MB)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, cwd=cwd, env=environment, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if process.returncode != 0:
            sys.exit(f"{' '.join(command[:4])} ... failed:\n{err.read()[-3000:]}")
        return out.read(), usage.ru_maxrss / 1024


def subsample(task: str, path: str, size: int):
    """The GLUE reader's subsample: the positions `random.Random(13370).sample` draws."""
    rows = read_examples(task, path)
    return [rows[i] for i in sorted(random.Random(13370).sample(range(len(rows)), size))]


def dev_scores(task: str, predictions: List[float], gold: List[float]) -> Dict[str, float]:
    if task == "stsb":
        from scipy.stats import pearsonr, spearmanr

        return {
            "pearson": float(pearsonr(predictions, gold)[0]),
            "spearman": float(spearmanr(predictions, gold)[0]),
        }
    from sklearn.metrics import f1_score

    accuracy = sum(p == g for p, g in zip(predictions, gold)) / len(gold)
    return {"accuracy": accuracy, "f1": float(f1_score(gold, predictions))}


def hf_trainer(args) -> dict:
    """The Hugging Face `Trainer` with `group_by_length` and dynamic padding."""
    import torch
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        DataCollatorWithPadding,
        Trainer,
        TrainingArguments,
    )

    regression = args.task == "stsb"
    model_name = args.model or default_model()
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    model = AutoModelForSequenceClassification.from_pretrained(
        model_name, num_labels=1 if regression else 2
    )
    task_dir = os.path.join(args.glue_dir, DIRECTORIES[args.task])

    def encode(examples):
        return [
            {
                **tokenizer(a, b, truncation=True, max_length=128),
                "labels": float(label) if regression else int(label),
            }
            for a, b, label in examples
        ]

    with tempfile.TemporaryDirectory() as directory:
        started = time.perf_counter()
        train = encode(subsample(args.task, os.path.join(task_dir, "train.tsv"), args.train_size))
        training_args = TrainingArguments(
            output_dir=directory,
            per_device_train_batch_size=32,
            learning_rate=args.lr,
            weight_decay=0.01,
            warmup_ratio=0.1,
            lr_scheduler_type="linear",
            max_grad_norm=1.0,
            num_train_epochs=args.epochs,
            group_by_length=True,
            save_strategy="no",
            eval_strategy="no",
            logging_strategy="no",
            report_to=[],
            seed=args.seed,
            use_cpu=True,
            dataloader_num_workers=0,
        )
        trainer = Trainer(
            model=model,
            args=training_args,
            train_dataset=train,
            data_collator=DataCollatorWithPadding(tokenizer),
        )
        trainer.train()
        seconds = time.perf_counter() - started
        rss = peak_rss_mb()
    result = {"seconds": seconds, "examples_per_second": len(train) * args.epochs / seconds}
    result["peak_rss_mb"] = rss
    if args.score:
        model.eval()
        dev = read_examples(args.task, os.path.join(task_dir, "dev.tsv"))
        encoded = encode(dev)
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]["input_ids"]))
        collate = DataCollatorWithPadding(tokenizer)
        outputs: Dict[int, float] = {}
        with torch.no_grad():
            for start in range(0, len(order), 64):
                chunk = order[start : start + 64]
                batch = collate(
                    [{k: v for k, v in encoded[i].items() if k != "labels"} for i in chunk]
                )
                logits = model(**batch).logits
                values = logits[:, 0] if regression else logits.argmax(-1)
                outputs.update(zip(chunk, values.tolist()))
        predictions = [outputs[i] for i in range(len(encoded))]
        gold = [float(label) if regression else int(label) for _, _, label in dev]
        result["dev"] = dev_scores(args.task, predictions, gold)
    return result


def allennlp_train(args, tree: str) -> dict:
    """`allennlp train` of `tree`'s config for the task, then `allennlp evaluate` on dev."""
    overrides = {
        "dataset_reader.train_size": args.train_size,
        "trainer.num_epochs": args.epochs,
        "trainer.optimizer.lr": args.lr,
        "validation_data_path": None,
        "random_seed": args.seed,
        "numpy_seed": args.seed,
        "pytorch_seed": args.seed,
        **json.loads(args.overrides),
    }
    environment = {
        **os.environ,
        "PYTHONPATH": tree,
        "TFT_MODEL": args.model or default_model(),
        "GLUE_DIR": args.glue_dir,
    }
    config = os.path.join(tree, "training_configs/glue", f"{args.task}.jsonnet")
    with tempfile.TemporaryDirectory() as directory:
        run = os.path.join(directory, "run")
        command = [sys.executable, "-m", "allennlp", "train", config, "-s", run]
        command += ["--include-package", "tft_allennlp", "-o", json.dumps(overrides)]
        _, rss = run_child(command, environment, cwd=tree)
        metrics = json.load(open(os.path.join(run, "metrics.json")))
        hours, minutes, seconds = metrics["training_duration"].split(":")
        seconds = 3600 * int(hours) + 60 * int(minutes) + float(seconds)
        result = {
            "seconds": seconds,
            "examples_per_second": args.train_size * args.epochs / seconds,
            "peak_rss_mb": rss,
        }
        if args.score:
            dev = os.path.join(args.glue_dir, DIRECTORIES[args.task], "dev.tsv")
            scores = os.path.join(directory, "dev.json")
            command = [sys.executable, "-m", "allennlp", "evaluate"]
            command += [os.path.join(run, "model.tar.gz"), dev, "--output-file", scores]
            command += ["--include-package", "tft_allennlp"]
            run_child(command, environment, cwd=tree)
            dev_metrics = json.load(open(scores))
            names = ("pearson", "spearman") if args.task == "stsb" else ("accuracy", "f1")
            result["dev"] = {name: dev_metrics[name] for name in names}
    return result


def train_main(args) -> None:
    sides = {"trainer": "HF Trainer", "plugin": "allennlp train"}
    if args.baseline_tree:
        sides["baseline"] = (
            f"allennlp train ({os.path.basename(os.path.abspath(args.baseline_tree))})"
        )
    results: Dict[str, list] = {side: [] for side in sides}
    scores: Dict[str, dict] = {}
    print(
        f"{args.task.upper()} {args.train_size} examples, {args.epochs} epoch(s), batch 32, "
        f"lr {args.lr}, {args.threads} threads, seed {args.seed}; plugin overrides "
        f"{args.overrides}; load average at start {os.getloadavg()[0]:.1f}"
    )
    print(
        "| round | side | seconds | examples/s | peak RSS (MB) | load |\n|---|---|---|---|---|---|"
    )
    names = list(sides)
    for round_number in range(1, args.rounds + 1):
        shift = (round_number - 1) % len(names)
        for side in names[shift:] + names[:shift]:
            passed = [*sys.argv[1:], "--side", side]
            if round_number == 1:
                passed.append("--score")
            output, _ = run_child([sys.executable, os.path.abspath(__file__), *passed], ENVIRONMENT)
            result = json.loads(output.split("RESULT", 1)[1])
            results[side].append(result)
            if "dev" in result:
                scores[side] = result["dev"]
            print(
                f"| {round_number} | {sides[side]} | {result['seconds']:.1f} | "
                f"{result['examples_per_second']:.1f} | {result['peak_rss_mb']:.0f} | "
                f"{os.getloadavg()[0]:.1f} |",
                flush=True,
            )
    print("\n| side | median examples/s | median peak RSS (MB) | dev |\n|---|---|---|---|")
    medians = {}
    for side, rs in results.items():
        medians[side] = statistics.median(r["examples_per_second"] for r in rs)
        rss = statistics.median(r["peak_rss_mb"] for r in rs)
        shown = ", ".join(f"{k} {100 * v:.1f}" for k, v in scores.get(side, {}).items())
        print(f"| {sides[side]} | {medians[side]:.1f} | {rss:.0f} | {shown} |")
    print(f"\nplugin / Trainer throughput (medians): {medians['plugin'] / medians['trainer']:.2f}")
    if "baseline" in medians:
        print(f"baseline / Trainer: {medians['baseline'] / medians['trainer']:.2f}")
    per_round = [
        p["examples_per_second"] / t["examples_per_second"]
        for p, t in zip(results["plugin"], results["trainer"])
    ]
    print("plugin / Trainer per round: " + " ".join(f"{r:.2f}" for r in per_round))
    rss_ratio = [
        p["peak_rss_mb"] / t["peak_rss_mb"] for p, t in zip(results["plugin"], results["trainer"])
    ]
    print("plugin / Trainer peak RSS per round: " + " ".join(f"{r:.3f}" for r in rss_ratio))


def write_pairs(path: str, pairs: int, glue_dir: str) -> None:
    rows = subsample("mrpc", os.path.join(glue_dir, "MRPC", "train.tsv"), pairs)
    with open(path, "w") as handle:
        for a, b, _ in rows:
            handle.write(json.dumps({"sentence1": a, "sentence2": b}) + "\n")


def make_archive(args, directory: str) -> str:
    """An MRPC archive trained briefly here on 200 pairs (not the ones predicted)."""
    archive = os.path.join(directory, "run", "model.tar.gz")
    if not os.path.exists(archive):
        overrides = {
            "dataset_reader.train_size": 200,
            "dataset_reader.seed": 7,
            "trainer.num_epochs": 1,
            "validation_data_path": None,
        }
        environment = {**ENVIRONMENT, "TFT_MODEL": args.model or default_model()}
        environment["GLUE_DIR"] = args.glue_dir
        config = os.path.join(ROOT, "training_configs/glue/mrpc.jsonnet")
        command = [sys.executable, "-m", "allennlp", "train", config]
        command += ["-s", os.path.join(directory, "run"), "--include-package", "tft_allennlp"]
        command += ["-o", json.dumps(overrides)]
        run_child(command, environment)
    return archive


def plugin_predict(args) -> dict:
    started = time.perf_counter()
    from allennlp.commands.predict import _get_predictor, _PredictManager
    from allennlp.common.plugins import import_plugins

    import_plugins()
    namespace = argparse.Namespace(
        archive_file=args.archive,
        weights_file=None,
        cuda_device=-1,
        overrides="",
        predictor_args="",
        predictor=None,
        dataset_reader_choice="validation",
    )
    predictor = _get_predictor(namespace)
    startup = time.perf_counter() - started
    started = time.perf_counter()
    manager = _PredictManager(predictor, args.input, args.output, args.batch_size, False, False)
    manager.run()
    seconds = time.perf_counter() - started
    return {"startup": startup, "seconds": seconds}


def plain_predict(args) -> dict:
    """A plain batched pass with transformers, sorted by length, with the archive's weights."""
    started = time.perf_counter()
    import tarfile

    import torch
    from transformers import AutoModel, AutoTokenizer, DataCollatorWithPadding

    model_name = args.model or default_model()
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    encoder = AutoModel.from_pretrained(model_name, add_pooling_layer=False)
    with tarfile.open(args.archive) as archive:
        state = torch.load(archive.extractfile("weights.th"), map_location="cpu")
    prefix = "_text_field_embedder.token_embedder_tokens.transformer_model."
    encoder.load_state_dict({k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)})
    linear = torch.nn.Linear(encoder.config.hidden_size, 2)
    linear.weight.data = state["_task_output._output_layer.weight"]
    linear.bias.data = state["_task_output._output_layer.bias"]
    labels = ["0", "1"]  # the config's declared label vocabulary, in order
    encoder.eval()
    collate = DataCollatorWithPadding(tokenizer)
    startup = time.perf_counter() - started

    started = time.perf_counter()
    with open(args.input) as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    encoded = [
        tokenizer(r["sentence1"], r["sentence2"], truncation=True, max_length=128) for r in records
    ]
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]["input_ids"]))
    probabilities: List[Optional[list]] = [None] * len(encoded)
    with torch.no_grad():
        for start in range(0, len(order), args.batch_size):
            chunk = order[start : start + args.batch_size]
            batch = collate([encoded[i] for i in chunk])
            # Shape: (batch_size, hidden_size): the final [CLS] states.
            vectors = encoder(**batch).last_hidden_state[:, 0]
            for index, row in zip(chunk, torch.softmax(linear(vectors), -1).tolist()):
                probabilities[index] = row
    with open(args.output, "w") as handle:
        for record, probs in zip(records, probabilities):
            label = labels[max(range(len(probs)), key=probs.__getitem__)]
            handle.write(json.dumps({**record, "probs": probs, "label": label}) + "\n")
    return {"startup": startup, "seconds": time.perf_counter() - started}


def predict_main(args) -> None:
    # The scratch folder holds a trained archive (about 340 MB): it goes when the benchmark ends.
    with tempfile.TemporaryDirectory(prefix="anchor_predict_") as work:
        predict_in(args, work)


def predict_in(args, work: str) -> None:
    archive = make_archive(args, work)
    pairs_file = os.path.join(work, "pairs.jsonl")
    write_pairs(pairs_file, args.pairs, args.glue_dir)
    sides = {"plain": "plain batched pass, sorted", "plugin": "allennlp predict"}
    results: Dict[tuple, list] = {}
    print(
        f"{args.pairs} MRPC pairs, 1 thread, an archive trained on 200 others; load average "
        f"at start {os.getloadavg()[0]:.1f}"
    )
    print(
        "| round | batch | side | start-up s | predict s | pairs/s | peak RSS (MB) | load |\n"
        "|---|---|---|---|---|---|---|---|"
    )
    outputs = {}
    for round_number in range(1, args.rounds + 1):
        names = list(sides) if round_number % 2 else list(sides)[::-1]
        for batch_size in args.batch_sizes:
            for side in names:
                output_file = os.path.join(work, f"{side}_{batch_size}.jsonl")
                command = [sys.executable, os.path.abspath(__file__), "predict", "--side", side]
                command += ["--archive", archive, "--input", pairs_file, "--output", output_file]
                command += ["--batch-size", str(batch_size)]
                environment = {**ENVIRONMENT, "OMP_NUM_THREADS": "1", "PYTHONPATH": ROOT}
                output, rss = run_child(command, environment)
                result = json.loads(output.split("RESULT", 1)[1])
                result["pairs_per_second"] = args.pairs / result["seconds"]
                result["peak_rss_mb"] = rss
                results.setdefault((batch_size, side), []).append(result)
                outputs[(batch_size, side)] = output_file
                print(
                    f"| {round_number} | {batch_size} | {sides[side]} | {result['startup']:.1f} | "
                    f"{result['seconds']:.1f} | {result['pairs_per_second']:.1f} | {rss:.0f} | "
                    f"{os.getloadavg()[0]:.1f} |",
                    flush=True,
                )
    print("\n| batch | plugin / plain (median pairs/s) | labels agreeing | max prob difference |")
    print("|---|---|---|---|")
    for batch_size in args.batch_sizes:
        ratio = statistics.median(
            r["pairs_per_second"] for r in results[(batch_size, "plugin")]
        ) / statistics.median(r["pairs_per_second"] for r in results[(batch_size, "plain")])
        plugin_rows = [json.loads(line) for line in open(outputs[(batch_size, "plugin")])]
        plain_rows = [json.loads(line) for line in open(outputs[(batch_size, "plain")])]
        agree = sum(p["label"] == q["label"] for p, q in zip(plugin_rows, plain_rows))
        difference = max(
            abs(a - b)
            for p, q in zip(plugin_rows, plain_rows)
            for a, b in zip(p["probs"], q["probs"])
        )
        print(f"| {batch_size} | {ratio:.2f} | {agree}/{len(plain_rows)} | {difference:.1e} |")


def padding_main(args) -> None:
    import torch
    from allennlp.common import Params
    from allennlp.data import DatasetReader
    from transformers.trainer_pt_utils import get_length_grouped_indices

    import tft_allennlp  # noqa: F401
    from tft_allennlp.data_loaders.streaming_data_loader import StreamingDataLoader

    os.environ.setdefault("TFT_MODEL", args.model or default_model())
    os.environ["GLUE_DIR"] = args.glue_dir
    config = os.path.join(ROOT, "training_configs/glue", f"{args.task}.jsonnet")
    params = Params.from_file(config, json.dumps({"dataset_reader.train_size": args.train_size}))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    path = params.pop("train_data_path")
    instances = list(reader.read(path))
    lengths = [len(instance["tokens"]) for instance in instances]
    labels = [
        float(getattr(field, "label", None) or field.tensor)  # LabelField or TensorField
        for field in (instance["label"] for instance in instances)
    ]
    position = {id(instance): index for index, instance in enumerate(instances)}

    def summary(batches: List[List[int]]) -> tuple:
        padded = sum(len(batch) * max(lengths[i] for i in batch) for batch in batches)
        means = [statistics.mean(labels[i] for i in batch) for batch in batches]
        return padded / sum(lengths), statistics.pstdev(means)

    schemes = {
        "random batches": {"bucket_batches": 0},
        "groups of 4 batches, 10% noise (tft_streaming's default)": {"bucket_batches": 4},
        "whole windows, no noise (the GLUE configs)": {"bucket_batches": 100, "padding_noise": 0.0},
    }
    print(f"{args.task.upper()}, {len(instances)} training examples, batch 32")
    print("| batches | padded / real wordpieces | sd of a batch's mean label |\n|---|---|---|")
    for name, options in schemes.items():
        loader = StreamingDataLoader(
            reader, path, batch_size=32, shuffle=True, max_instances_in_memory=3200, **options
        )
        results = []
        for seed in range(10):
            random.seed(seed)
            batches = loader._batches(iter(instances))
            results.append(summary([[position[id(i)] for i in batch] for batch in batches]))
        print(
            f"| {name} | {statistics.mean(r[0] for r in results):.3f} | "
            f"{statistics.mean(r[1] for r in results):.3f} |"
        )
    results = []
    for seed in range(10):
        order = get_length_grouped_indices(
            lengths, 32, generator=torch.Generator().manual_seed(seed)
        )
        results.append(summary([order[i : i + 32] for i in range(0, len(order), 32)]))
    print(
        f"| HF Trainer, group_by_length | {statistics.mean(r[0] for r in results):.3f} | "
        f"{statistics.mean(r[1] for r in results):.3f} |"
    )


ENVIRONMENT: Dict[str, str] = {}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["train", "predict", "padding"])
    parser.add_argument(
        "--glue-dir", default=os.environ.get("GLUE_DIR", os.path.join(ROOT, "../shared/data/glue"))
    )
    parser.add_argument("--model", default=None, help="default: all-MiniLM-L6-v2 from PyPI")
    parser.add_argument("--rounds", type=int, default=5)
    # train
    parser.add_argument("--task", default="mrpc", choices=sorted(DIRECTORIES))
    parser.add_argument("--train-size", type=int, default=1000)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--overrides", default="{}", help="more overrides for the plugin side")
    parser.add_argument("--baseline-tree", default=None, help="another checkout, as a third side")
    # predict
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 64])
    # one side, in its own process
    parser.add_argument("--side", help=argparse.SUPPRESS)
    parser.add_argument("--score", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--archive", help=argparse.SUPPRESS)
    parser.add_argument("--input", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    parser.add_argument("--batch-size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    ENVIRONMENT.update(
        {
            **os.environ,
            "OMP_NUM_THREADS": str(args.threads),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
        }
    )
    if args.side:
        if args.mode == "predict":
            result = plain_predict(args) if args.side == "plain" else plugin_predict(args)
        elif args.side == "trainer":
            result = hf_trainer(args)
        else:
            result = allennlp_train(args, args.baseline_tree if args.side == "baseline" else ROOT)
        print("RESULT", json.dumps(result))
        return
    if args.mode == "train":
        train_main(args)
    elif args.mode == "predict":
        predict_main(args)
    else:
        padding_main(args)


if __name__ == "__main__":
    main()
