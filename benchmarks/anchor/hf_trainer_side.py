"""
The anchor benchmark's `trainer` side: one fine-tuning run with the Hugging Face `Trainer`, in
its own process, then (with `--score`, untimed) its score on the dev file.
"""

import json
import os
import tempfile
import time
from typing import Dict, List

from glue_throughput_benchmark import read_examples
from reader_benchmark import default_model

from anchor.glue_data import DIRECTORIES, subsample
from anchor.processes import peak_rss_mb


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
        set_seed,
    )

    regression = args.task == "stsb"
    model_name = args.model or default_model()
    # The classifier head is initialised when the model loads, before the Trainer seeds: seed
    # first, so that the seed fixes the run as it does the plugin's.
    set_seed(args.seed)
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    model = AutoModelForSequenceClassification.from_pretrained(
        model_name,
        num_labels=1 if regression else 2,
        **({"attn_implementation": args.trainer_attention} if args.trainer_attention else {}),
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
            warmup_steps=0.1,  # a fraction of the steps (transformers 5 folded warmup_ratio in)
            lr_scheduler_type="linear",
            max_grad_norm=1.0,
            num_train_epochs=args.epochs,
            train_sampling_strategy="group_by_length",  # transformers 5's name for group_by_length
            save_strategy="no",
            eval_strategy="no",
            logging_strategy="no",
            report_to=[],
            seed=args.seed,
            use_cpu=True,
            dataloader_num_workers=0,
            **json.loads(args.trainer_options),
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
