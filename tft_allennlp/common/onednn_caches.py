"""
How many of oneDNN's compiled kernels a process keeps: `bound_onednn_caches`.

On a CPU, PyTorch's bfloat16 matrix products run through oneDNN, which compiles a kernel (a
"primitive") for each new shape and keeps it in two caches: oneDNN's own and that of its C++
wrapper in PyTorch (ideep), up to 1,024 entries each by default. Training or predicting with
varying batch lengths makes new shapes at every batch, so the caches fill, about half a gigabyte
for MiniLM (peak RSS of a bfloat16 MRPC epoch 2.43 GB, against 1.77 GB with both caches at 64;
benchmarks/RESULTS.md, "Faster dropout, attention in bfloat16, oneDNN's caches, freed memory"),
while a kernel is seldom met again before it is evicted. The two sizes are environment
variables, `ONEDNN_PRIMITIVE_CACHE_CAPACITY` and `LRU_CACHE_CAPACITY`, that oneDNN reads when it
first runs in a process; PyTorch has no call to change them later.
"""

import logging
import os
from typing import Dict

from allennlp.common.checks import ConfigurationError

logger = logging.getLogger(__name__)

# oneDNN's own cache of primitives, and ideep's of the computations built on them.
VARIABLES = ("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "LRU_CACHE_CAPACITY")


def bound_onednn_caches(capacity: int) -> Dict[str, str]:
    """
    Sets both cache sizes to `capacity` kernels, each where the environment does not already
    set it (a user's own setting stays), and returns what it set. It takes effect only if no
    oneDNN kernel has run yet in this process (and in child processes started after it); call
    it before the first bfloat16 matrix product on the CPU.
    """
    if capacity < 1:
        raise ConfigurationError(f"onednn_cache_capacity {capacity}: at least 1 kernel.")
    chosen = {}
    for variable in VARIABLES:
        if variable not in os.environ:
            os.environ[variable] = chosen[variable] = str(capacity)
    if chosen:
        logger.info("oneDNN's kernel caches bounded: %s", chosen)
    return chosen
