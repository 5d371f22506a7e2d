"""
Injection training steps with span pooling packed (the plugin's extractors: one row per token
inside a span) against pooling padded to the longest span of the batch (AllenNLP's
`batched_span_select`, which the plugin used before), on a real aligned corpus.

    TFT_MODEL=... python benchmarks/span_pooling_benchmark.py CORPUS.jsonl --steps 20 \
        [--config training_configs/injection/tft_simple.jsonnet] [--longest]

The model and reader are the injection config's (`tft.jsonnet`: max pooling; `tft_simple.jsonnet`:
mean pooling), one thread, batches of 100 from sorted whole windows of 5,000 (the multi-source
grids' batching), under bfloat16 autocast as the grids train. Both settings train the same
batches, in alternating steps from the same weights (each step's gradients are discarded), so
that both see the same machine load. Prints seconds per step, the elements of the tensor each
setting pools (padding included), how far the resident memory of each setting rose, run alone
in a forked child, the ratios, and the largest difference between their losses (0 for max pooling).
"""

import argparse
import json
import os
import random
import sys
import time
from typing import Any, Dict, List, Optional

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from injection_memory_benchmark import _peak_in_child  # noqa: E402

CONFIG = os.path.join(os.path.dirname(__file__), "..", "training_configs/injection/tft.jsonnet")


def padded_embed_spans(
    self: Any,
    sequence_tensor: torch.Tensor,
    span_indices: torch.Tensor,
    sequence_mask: Optional[torch.Tensor] = None,
    span_indices_mask: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """The plugin's pooling before: every span padded to the longest one of the batch."""
    from allennlp.nn import util

    if span_indices_mask is not None:
        span_indices = span_indices * span_indices_mask.unsqueeze(-1).long()
    # Shape: (batch_size, num_spans, max_span_width, input_dim)
    vectors, mask = util.batched_span_select(sequence_tensor, span_indices)
    if sequence_mask is not None:
        tokens = util.batched_span_select(sequence_mask.unsqueeze(-1), span_indices)[0]
        mask = mask & tokens.squeeze(-1).bool()
    PADDED_ELEMENTS.append(vectors.numel())
    pool = util.masked_max if self.__class__.__name__.startswith("Max") else util.masked_mean
    return pool(vectors, mask.unsqueeze(-1), dim=-2)


PADDED_ELEMENTS: List[int] = []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", help="an aligned corpus (allennlp tft-align's JSON lines)")
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--config", default=CONFIG, help="an injection config")
    parser.add_argument(
        "--longest",
        action="store_true",
        help="the batches of the first window with the longest spans, not the first ones",
    )
    args = parser.parse_args()
    os.environ.setdefault("TFT_PARAPHRASE_CORPUS", args.corpus)
    from allennlp.common import Params
    from allennlp.data import DataLoader, DatasetReader, Vocabulary
    from allennlp.models import Model

    import tft_allennlp  # noqa: F401
    from tft_allennlp.modules.span_extractors.pooling_span_extractor import (
        PoolingSpanExtractor,
    )

    torch.set_num_threads(1)
    random.seed(1)
    torch.manual_seed(1)
    params = Params.from_file(args.config)
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    vocab = Vocabulary.from_params(params.pop("vocabulary"), instances=[])
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    loader_params = {"type": "tft_streaming", "batch_size": 100, "shuffle": True}
    loader_params.update(max_instances_in_memory=5000, bucket_batches=50, padding_noise=0.0)
    loader = DataLoader.from_params(Params(loader_params), reader=reader, data_path=args.corpus)
    loader.index_with(vocab)
    if args.longest:
        window = list(_take(iter(loader), 5000 // 100))
        window.sort(key=_longest_span, reverse=True)
        batches = window[: args.steps + 1]
    else:
        batches = list(_take(iter(loader), args.steps + 1))
    packed_embed_spans = PoolingSpanExtractor._embed_spans
    settings = {"padded": padded_embed_spans, "packed": packed_embed_spans}

    def step(name: str, batch: Dict[str, Any]) -> float:
        PoolingSpanExtractor._embed_spans = settings[name]  # type: ignore[method-assign]
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(**batch)["loss"]
        loss.backward()
        model.zero_grad()
        return loss.item()

    model.eval()  # no dropout, so that both settings compute the same losses
    # Each setting alone in a child first, before this process's heap has grown.
    peaks = {
        name: _peak_in_child(lambda name=name: [step(name, batch) for batch in batches[1:]])
        for name in settings
    }
    del PADDED_ELEMENTS[:]
    seconds = {name: 0.0 for name in settings}
    losses: Dict[str, List[float]] = {name: [] for name in settings}
    for name in settings:
        step(name, batches[0])  # warm-up
    for batch in batches[1:]:
        for name in settings:
            start = time.perf_counter()
            losses[name].append(step(name, batch))
            seconds[name] += time.perf_counter() - start
    packed_elements = sum(_packed_elements(batch, model) for batch in batches[1:])
    padded_elements = sum(PADDED_ELEMENTS[2:])  # two extractions a batch, after the warm-up's
    result: Dict[str, Any] = {
        name: {
            "seconds_per_step": seconds[name] / args.steps,
            "peak_added_GB": peaks[name],
        }
        for name in settings
    }
    result["padded"]["pooled_elements"] = padded_elements
    result["packed"]["pooled_elements"] = packed_elements
    result["time ratio (padded / packed)"] = seconds["padded"] / seconds["packed"]
    result["elements ratio"] = padded_elements / packed_elements
    result["largest loss difference"] = max(
        abs(padded - packed) for padded, packed in zip(losses["padded"], losses["packed"])
    )
    print(json.dumps(result, indent=2))


def _take(iterator: Any, count: int) -> Any:
    for _ in range(count):
        yield next(iterator)


def _longest_span(batch: Dict[str, Any]) -> int:
    spans = torch.cat([batch["source_spans"], batch["target_spans"]], dim=1)
    return int((spans[..., 1] - spans[..., 0]).max()) + 1


def _packed_elements(batch: Dict[str, Any], model: Any) -> int:
    """Elements of the packed token vectors of a batch's source and target spans."""
    dim = model._span_extractor.get_input_dim()
    total = 0
    for key in ("source_spans", "target_spans"):
        spans = batch[key]
        kept = spans[..., 0] >= 0
        total += int((spans[..., 1] - spans[..., 0] + 1)[kept].sum()) * dim
    return total


if __name__ == "__main__":
    main()
