"""
The `gpu` tests (`pytest -m gpu`; deselected by default) run on CUDA device 0. With
`TFT_GPU_REHEARSAL=cpu` and no CUDA they run the same code on the CPU instead, as
`benchmarks/gpu/run.sh` rehearses the device check: gloo for NCCL, CPU autocast for CUDA's, and
float32 where the `tft_mixed_precision` trainer (rightly) refuses mixed precision on a CPU.
`TFT_GPU_REPORT`, if set, names a JSON-lines file the tests append their measured loss tracks to.
"""

import json
import os
from typing import Any, Dict

import pytest
import torch


@pytest.fixture(scope="session")
def device() -> torch.device:
    if torch.cuda.is_available():
        return torch.device("cuda", 0)
    if os.environ.get("TFT_GPU_REHEARSAL") == "cpu":
        return torch.device("cpu")
    pytest.fail(
        "the gpu tests need a CUDA device (TFT_GPU_REHEARSAL=cpu rehearses them on the CPU)"
    )


@pytest.fixture(scope="session")
def report():
    """Appends one record to the `TFT_GPU_REPORT` file, if one is named."""

    def write(record: Dict[str, Any]) -> None:
        path = os.environ.get("TFT_GPU_REPORT")
        if path:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")

    return write
