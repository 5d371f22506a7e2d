"""
The anchor benchmark's `plugin` and `baseline` sides: `allennlp train` of a checkout's GLUE
config, in its own process, then (with `--score`) `allennlp evaluate` on the dev file.
"""

import json
import os
import sys
import tempfile

from reader_benchmark import default_model

from anchor.glue_data import DIRECTORIES
from anchor.processes import run_child


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
