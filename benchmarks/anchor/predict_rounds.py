"""
The anchor benchmark's `predict` mode: an archive trained here first, the pairs file, both sides
for each batch size, each in a fresh process with one thread, alternating for `--rounds` rounds;
a table of every run, then one of the ratios and of how far the two sides' outputs agree.
"""

import json
import os
import statistics
import sys
import tempfile
from typing import Dict

from reader_benchmark import default_model

from anchor.glue_data import write_pairs
from anchor.processes import ENVIRONMENT, ROOT, SCRIPT, run_child


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


def predict_main(args) -> None:
    # The scratch folder holds a trained archive (about 340 MB): it goes when the benchmark ends.
    with tempfile.TemporaryDirectory(prefix="anchor_predict_") as work:
        predict_in(args, work)


def predict_in(args, work: str) -> None:
    archive = make_archive(args, work)
    pairs_file = os.path.join(work, "pairs.jsonl")
    gold = write_pairs(pairs_file, args.pairs, args.glue_dir)
    sides = {"plain": "plain batched pass, sorted", "plugin": "allennlp predict"}
    results: Dict[tuple, list] = {}
    print(
        f"{args.pairs} MRPC pairs, 1 thread, an archive trained on 200 others; load average "
        f"at start {os.getloadavg()[0]:.1f}; predictor args {args.predictor_args}, plain pass "
        f"in {args.plain_precision}"
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
                command = [sys.executable, SCRIPT, "predict", "--side", side]
                command += ["--archive", archive, "--input", pairs_file, "--output", output_file]
                command += ["--batch-size", str(batch_size)]
                command += ["--predictor-args", args.predictor_args]
                command += ["--plain-precision", args.plain_precision]
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
    print(
        "\n| batch | plugin / plain (median pairs/s) | labels agreeing | max prob difference "
        "| accuracy plain / plugin |"
    )
    print("|---|---|---|---|---|")
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
        accuracy = [
            100 * sum(row["label"] == label for row, label in zip(rows, gold)) / len(gold)
            for rows in (plain_rows, plugin_rows)
        ]
        print(
            f"| {batch_size} | {ratio:.2f} | {agree}/{len(plain_rows)} | {difference:.1e} "
            f"| {accuracy[0]:.1f} / {accuracy[1]:.1f} |"
        )
