"""
Injection and GLUE training steps in float32, float16 (with a gradient scaler) and bfloat16
under `torch.autocast`, as the `tft_mixed_precision` trainer takes them: 20 Adam steps on the
whole fixture set as one batch, from the same initial weights, without dropout. Every loss must
be finite, float32 must learn, and the mixed-precision losses must track float32's.
"""

import json
import math

import pytest
import torch
from allennlp.common import Params, cached_transformers
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.nn.util import move_to_device

from tests import CONFIGS_ROOT

pytestmark = pytest.mark.gpu

NO_DROPOUT = {
    "model.dropout": 0.0,
    "model.text_field_embedder.token_embedders.tokens.transformer_kwargs": {
        "hidden_dropout_prob": 0.0,
        "attention_probs_dropout_prob": 0.0,
    },
}
FAMILIES = {
    "injection": ("injection/tft.jsonnet", {"dataset_reader.part": "all"}),
    "glue": ("glue/mrpc.jsonnet", {}),
}
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
STEPS = 20
# Largest gap allowed between a mixed-precision loss and float32's at the same step, relative to
# float32's loss (bfloat16 keeps 8 bits of mantissa: about 0.4% per rounding).
TRACKING = {"float16": 0.02, "bfloat16": 0.05}


def losses(family: str, dtype: torch.dtype, device: torch.device):
    config, overrides = FAMILIES[family]
    params = Params.from_file(str(CONFIGS_ROOT / config), json.dumps({**NO_DROPOUT, **overrides}))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(params.pop("train_data_path")))
    vocab = Vocabulary.from_params(params.pop("vocabulary"), instances=instances)
    cached_transformers._clear_caches()
    torch.manual_seed(0)
    model = Model.from_params(vocab=vocab, params=params.pop("model")).to(device).train()
    batch = Batch(instances)
    batch.index_instances(vocab)
    tensors = move_to_device(batch.as_tensor_dict(), device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler(device.type, enabled=dtype == torch.float16)
    track = []
    for _ in range(STEPS):
        optimizer.zero_grad()
        with torch.autocast(device.type, dtype=dtype, enabled=dtype != torch.float32):
            loss = model(**tensors)["loss"]
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        track.append(loss.item())
    return track


@pytest.mark.parametrize("family", list(FAMILIES))
def test_mixed_precision_steps_track_float32(family, device, report):
    tracks = {name: losses(family, dtype, device) for name, dtype in DTYPES.items()}
    report({"test": "precision", "family": family, "device": str(device), "losses": tracks})
    for name, track in tracks.items():
        assert all(math.isfinite(loss) for loss in track), (name, track)
    reference = tracks["float32"]
    assert reference[-1] < 0.9 * reference[0], reference
    for name, tolerance in TRACKING.items():
        gaps = [abs(a - b) / abs(b) for a, b in zip(tracks[name], reference)]
        assert max(gaps) <= tolerance, (name, gaps)
