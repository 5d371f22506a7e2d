"""
Freed memory kept in the process for the next training step: `reuse_freed_memory`.

glibc's `malloc` gives each large block (from 128 KB, a bound that rises with the blocks freed,
to at most 32 MB) its own mapping from the kernel and unmaps it when freed, and hands the top of
its heap back once more than twice that bound is free there. A training step allocates and frees
hundreds of megabytes of activations and gradients (MiniLM's word-embedding gradient alone is
47 MB), so each step the kernel maps and zeroes fresh pages again: about 20,000 page faults a
step of a bfloat16 MRPC epoch at batch 32. With `mallopt`, blocks up to 256 MB come from the heap
and up to 1 GB of free memory stays at its top, so a step reuses the pages of the one before:
half the page faults of the epoch, 4-8% of its time, at about 0.1 GB more peak memory
(benchmarks/RESULTS.md, "Faster dropout, attention in bfloat16, oneDNN's caches, freed memory").
"""

import ctypes
import logging

logger = logging.getLogger(__name__)

# mallopt's parameters (glibc's malloc.h) and the values set.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 256 << 20
TRIM_THRESHOLD = 1 << 30


def reuse_freed_memory() -> bool:
    """
    Sets glibc's thresholds for this process (see the module's docstring); returns whether they
    were set. Elsewhere than glibc (or where `mallopt` refuses) a warning says memory is handled
    as usual.
    """
    libc = ctypes.CDLL(None)
    mallopt = getattr(libc, "mallopt", None)
    glibc = hasattr(libc, "gnu_get_libc_version")
    if mallopt is None or not glibc:
        logger.warning("reuse_freed_memory: this C library is not glibc; memory handled as usual.")
        return False
    if not (
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    ):
        logger.warning("reuse_freed_memory: glibc's mallopt refused; memory handled as usual.")
        return False
    logger.info(
        "Freed memory kept for reuse: blocks up to %d MB from the heap, up to %d MB kept free.",
        MMAP_THRESHOLD >> 20,
        TRIM_THRESHOLD >> 20,
    )
    return True
