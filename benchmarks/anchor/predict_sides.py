"""
The anchor benchmark's two prediction sides, each one run in its own process: `allennlp
predict`'s own code path, and a plain batched pass with transformers, sorted by length, with the
archive's weights. Each returns its start-up and prediction seconds apart.
"""

import argparse
import json
import time
from typing import List, Optional

from reader_benchmark import default_model


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
        predictor_args=args.predictor_args,
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
    bfloat16 = args.plain_precision == "bfloat16"
    with torch.no_grad(), torch.autocast("cpu", torch.bfloat16, enabled=bfloat16):
        for start in range(0, len(order), args.batch_size):
            chunk = order[start : start + args.batch_size]
            batch = collate([encoded[i] for i in chunk])
            # Shape: (batch_size, hidden_size): the final [CLS] states.
            vectors = encoder(**batch).last_hidden_state[:, 0]
            for index, row in zip(chunk, torch.softmax(linear(vectors).float(), -1).tolist()):
                probabilities[index] = row
    with open(args.output, "w") as handle:
        for record, probs in zip(records, probabilities):
            label = labels[max(range(len(probs)), key=probs.__getitem__)]
            handle.write(json.dumps({**record, "probs": probs, "label": label}) + "\n")
    return {"startup": startup, "seconds": time.perf_counter() - started}
