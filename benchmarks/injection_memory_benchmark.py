"""
Where an injection's peak memory comes from: the batches of one epoch that cost the most, and
how much of each one's training step is the encoder's and how much the phrase head's.

    python benchmarks/injection_memory_benchmark.py RUN/config.json [--top 3]

RUN/config.json is a training config as `allennlp train` saved it (its reader, corpus, loader
and model); the epoch's batches come from its own data loader (`tft_streaming`: sorted whole
windows, so a few batches hold the longest pairs). One pass collates every batch without
training and keeps the `--top` batches by padded wordpieces (batch x length) and by padded
pooling elements (batch x phrase pairs x longest span, each side). Each kept batch then trains
one step (forward, backward; model in training mode, bfloat16 autocast where the config's trainer
asks for it, one thread) in a forked child whose resident high-water mark is reset first, twice:
the whole model's loss, and the encoder alone (the sum of its output as the loss). Prints a table
of the batches' shapes and the memory each step added.
"""

import argparse
import json
import os
from typing import Any, Callable, Dict, List, Tuple

import torch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", help="a training config (a run's config.json)")
    parser.add_argument("--top", type=int, default=3, help="batches kept by each measure")
    args = parser.parse_args()
    from allennlp.common import Params
    from allennlp.data import DataLoader, DatasetReader, Vocabulary
    from allennlp.models import Model

    import tft_allennlp  # noqa: F401

    torch.set_num_threads(1)
    torch.manual_seed(1)
    params = Params.from_file(args.config)
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    vocab = Vocabulary.from_params(params.pop("vocabulary"), instances=[])
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    loader = DataLoader.from_params(
        params.pop("data_loader"), reader=reader, data_path=params.pop("train_data_path")
    )
    loader.index_with(vocab)
    precision = params.get("trainer", {}).get("precision", "float32")
    dtype = torch.bfloat16 if precision in ("bfloat16", "auto") else None

    kept: Dict[str, List[Tuple[int, int, Dict[str, Any]]]] = {"wordpieces": [], "pooling": []}
    count = 0
    for index, batch in enumerate(loader):
        count += 1
        shape = _shape(batch)
        for measure in kept:
            kept[measure].append((shape[measure], index, batch))
            kept[measure].sort(key=lambda item: item[0], reverse=True)
            del kept[measure][args.top :]
    chosen = {index: batch for measure in kept for _, index, batch in kept[measure]}

    def whole(batch: Dict[str, Any]) -> Callable[[], None]:
        return lambda: _step(lambda: model(**batch)["loss"], dtype)

    def encoder(batch: Dict[str, Any]) -> Callable[[], None]:
        embedder = model._text_field_embedder
        return lambda: _step(lambda: embedder(batch["tokens"]).float().sum(), dtype)

    model.train()
    print(f"{args.config}: {count} batches; precision {precision}")
    print(
        "| batch | instances | wordpieces (length) | phrase pairs | longest span "
        "| pooled elements | GB added: whole step | GB added: encoder alone |"
    )
    print("|---|---|---|---|---|---|---|---|")
    rows = []
    for index in sorted(chosen):
        shape = _shape(chosen[index])
        row = dict(shape, batch=index)
        row["whole_GB"] = _peak_in_child(whole(chosen[index]))
        row["encoder_GB"] = _peak_in_child(encoder(chosen[index]))
        rows.append(row)
        print(
            f"| {index} | {shape['instances']} | {shape['wordpieces']:,} ({shape['length']}) "
            f"| {shape['pairs']} | {shape['longest_span']} | {shape['pooling']:,} "
            f"| {row['whole_GB']} | {row['encoder_GB']} |"
        )
    print(json.dumps(rows))


def _shape(batch: Dict[str, Any]) -> Dict[str, int]:
    token_ids = batch["tokens"]["tokens"]["token_ids"]
    instances, length = token_ids.shape
    spans = batch["source_spans"]
    pairs = spans.size(1)
    longest = 0
    for key in ("source_spans", "target_spans"):
        widths = batch[key][..., 1] - batch[key][..., 0] + 1
        longest = max(longest, int(widths.max()) if widths.numel() else 0)
    return {
        "instances": instances,
        "length": length,
        "wordpieces": instances * length,
        "pairs": pairs,
        "longest_span": longest,
        "pooling": 2 * instances * pairs * longest,
    }


def _step(loss_of: Callable[[], torch.Tensor], dtype: Any) -> None:
    if dtype is not None:
        with torch.autocast("cpu", dtype=dtype):
            loss = loss_of()
    else:
        loss = loss_of()
    loss.backward()


def _peak_in_child(work: Callable[[], None]) -> float:
    """
    How far (GB) the resident memory of a forked child that does `work` rose above its start:
    its high-water mark is reset first (`/proc/self/clear_refs`; a child inherits the parent's).
    """
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        start = _status_kb("VmRSS")
        work()
        os.write(write, str(_status_kb("VmHWM") - start).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as handle:
        added_kb = int(handle.read())
    os.waitpid(pid, 0)
    return round(added_kb / 2**20, 2)


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as handle:
        line = next(line for line in handle if line.startswith(field + ":"))
    return int(line.split()[1])


if __name__ == "__main__":
    main()
