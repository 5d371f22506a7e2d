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
checkout (e.g. the main branch: "before"). `--overrides` adds config overrides to the plugin's
side, `--trainer-options` `TrainingArguments` to the Trainer's (each side's own best options,
e.g. `'{"trainer.type": "tft_mixed_precision", "trainer.precision": "bfloat16"}'` and
`'{"bf16": true, "optim": "adamw_torch_fused"}'`; `--trainer-attention` the Trainer's model's
`attn_implementation`). The sides alternate, in a rotating order, for
`--rounds` rounds; ratios are taken on the medians. Each side's model is scored on the dev file
after its first round only (untimed; the seed fixes the run, so later rounds repeat it).

`predict`: `allennlp predict` (the command's own code path: `_get_predictor` then
`_PredictManager.run`, in-process so that start-up is timed apart) against a plain batched
forward pass with transformers, sorted by length, on `--pairs` real MRPC training pairs, one
thread, the same weights (an archive trained here first on 200 other pairs). The plain pass
reads the JSON lines, tokenizes, sorts all pairs by length, pads each batch to its longest pair,
runs the encoder, the [CLS] vector and the linear layer, softmax, and writes the labels and
probabilities in input order. Start-up (imports, loading the model) is reported separately.
Both sides' labels are compared, with each other and with the pairs' gold labels (accuracy).
`--predictor-args` goes to `allennlp predict` (`'{"precision": "bfloat16"}'`),
`--plain-precision bfloat16` runs the plain pass under bfloat16 autocast.

`padding`: padded wordpieces per real wordpiece in the batches of one epoch over the task's
`--train-size` examples (the config's reader and `tft_streaming`'s own batching; mean of 10
shufflings), for random batches, `tft_streaming`'s default bucketing, the GLUE configs' and the
`Trainer`'s `group_by_length`, and the standard deviation of a batch's mean label.

The parts live in `benchmarks/anchor/`, one job per module; this script parses the options and
runs a mode, or one side of it in its own process (`--side`, which the modes pass).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from anchor.allennlp_train_side import allennlp_train  # noqa: E402
from anchor.glue_data import DIRECTORIES  # noqa: E402
from anchor.hf_trainer_side import hf_trainer  # noqa: E402
from anchor.padding import padding_main  # noqa: E402
from anchor.predict_rounds import predict_main  # noqa: E402
from anchor.predict_sides import plain_predict, plugin_predict  # noqa: E402
from anchor.processes import ENVIRONMENT, ROOT  # noqa: E402
from anchor.train_rounds import train_main  # noqa: E402


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
    parser.add_argument(
        "--trainer-options", default="{}", help="more TrainingArguments for the Trainer side"
    )
    parser.add_argument(
        "--trainer-attention",
        default=None,
        choices=["sdpa", "eager"],
        help="the Trainer side's attn_implementation (default transformers' choice)",
    )
    parser.add_argument("--baseline-tree", default=None, help="another checkout, as a third side")
    # predict
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 64])
    parser.add_argument(
        "--predictor-args", default="{}", help='the plugin side\'s, e.g. {"precision": "bfloat16"}'
    )
    parser.add_argument(
        "--plain-precision",
        default="float32",
        choices=["float32", "bfloat16"],
        help="the plain pass's (bfloat16: under autocast)",
    )
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
