"""
What a model's outputs are. Each model of the plugin declares the batch-first outputs that its
users read by kind (`output_kinds()`: output key -> kind), so that nothing has to guess them
from their names: SMART regularises its predictions (`tft_smart`), and the `tft_sentence_pair`
predictor returns a Siamese model's sentence embeddings.
"""

from typing import Dict, Optional

import torch

CLASSIFICATION = "classification"
"""Logits, shape `(batch_size, num_labels)`."""
REGRESSION = "regression"
"""Scores, shape `(batch_size,)`."""
EMBEDDING = "embedding"
"""Vectors, shape `(batch_size, embedding_dim)`."""
PREDICTIONS = (CLASSIFICATION, REGRESSION)
SHAPES = {
    CLASSIFICATION: "(batch_size, num_labels) logits",
    REGRESSION: "(batch_size,) scores",
    EMBEDDING: "(batch_size, embedding_dim) vectors",
}


def output_kinds(model: torch.nn.Module) -> Optional[Dict[str, str]]:
    """The kinds `model` declares by its `output_kinds()`; None if it declares none."""
    declared = getattr(model, "output_kinds", None)
    return None if declared is None else dict(declared())


def has_shape(value: object, kind: str) -> bool:
    """Whether `value` is a floating-point tensor of the shape of `kind`'s outputs."""
    if not isinstance(value, torch.Tensor) or not value.is_floating_point():
        return False
    return value.dim() == (1 if kind == REGRESSION else 2)
