"""
The memory one training step adds on a batch shaped like the worst of a 74k-pair injection epoch
(`injection_memory_benchmark.py` found it: 100 pairs of 128 wordpieces, 96 phrase pairs, spans up
to 106 wordpieces), with span pooling packed (the plugin's extractors) and padded to the longest
span (AllenNLP's `batched_span_select`, `span_pooling_benchmark.padded_embed_spans`).

    TFT_MODEL=... python benchmarks/span_pooling_peak_benchmark.py

Synthetic batch (seed 0): each pair has 60-96 phrase pairs of 1-6 wordpieces, as the real corpus
(mean 2.6), and two pairs hold the long spans that set the padded width. The `tft` config's model
in training mode under bfloat16 autocast, one thread; each setting's step runs in a forked child
whose high-water mark is reset first, padded, packed, then padded again.
"""

import os
import random
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from injection_memory_benchmark import _peak_in_child  # noqa: E402
from span_pooling_benchmark import CONFIG, padded_embed_spans  # noqa: E402

BATCH, LENGTH, PAIRS = 100, 128, 96


def spans() -> torch.Tensor:
    # Shape: (batch_size, num_pairs, 2); padding (-1, -1).
    source = torch.full((BATCH, PAIRS, 2), -1, dtype=torch.long)
    for row in range(BATCH):
        for pair in range(random.randint(60, PAIRS)):
            width = random.choice([1, 1, 2, 2, 3, 4, 6])
            start = random.randint(1, 60 - width)
            source[row, pair] = torch.tensor([start, start + width - 1])
    source[0, 0], source[1, 0] = torch.tensor([1, 106]), torch.tensor([5, 110])
    return source


def main() -> None:
    from allennlp.common import Params
    from allennlp.data import Vocabulary
    from allennlp.models import Model

    import tft_allennlp  # noqa: F401
    from tft_allennlp.modules.span_extractors.pooling_span_extractor import (
        PoolingSpanExtractor,
    )

    torch.set_num_threads(1)
    torch.manual_seed(0)
    random.seed(0)
    params = Params.from_file(CONFIG)
    vocab = Vocabulary.from_params(params.pop("vocabulary"), instances=[])
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    model.train()
    source = spans()
    target = torch.where(source >= 0, (source + 62).clamp(max=126), source)
    target[0, 0], target[1, 0] = torch.tensor([10, 120]), torch.tensor([7, 100])
    batch = {
        "tokens": {
            "tokens": {
                "token_ids": torch.randint(1000, 30000, (BATCH, LENGTH)),
                "mask": torch.ones(BATCH, LENGTH, dtype=torch.bool),
                "type_ids": (torch.arange(LENGTH) >= 64).long().expand(BATCH, LENGTH).contiguous(),
            }
        },
        "source_spans": source,
        "target_spans": target,
        "label": torch.randint(0, 2, (BATCH,)),
        "phrase_labels": torch.where(source[..., 0] >= 0, torch.randint(0, 3, (BATCH, PAIRS)), -1),
    }
    packed = PoolingSpanExtractor._embed_spans

    def step() -> None:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(**batch)["loss"]
        loss.backward()

    for name, embed in (
        ("padded", padded_embed_spans),
        ("packed", packed),
        ("padded", padded_embed_spans),
    ):
        PoolingSpanExtractor._embed_spans = embed  # type: ignore[method-assign]
        print(f"{name}: {_peak_in_child(step)} GB added", flush=True)


if __name__ == "__main__":
    main()
