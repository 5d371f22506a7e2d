"""
What this machine offers a grid's jobs: its CPUs, the GPUs it may use, its kind of CPU (recorded
with every attempt), and the CPU threads and GPU each job slot gets when several run at once.
"""

import os
from typing import Dict, List, Optional


def cpu_kind() -> Optional[str]:
    """
    This machine's kind of CPU as Linux names it (`/proc/cpuinfo`: vendor, family, model), e.g.
    "GenuineIntel 6/207"; None elsewhere. Training reproduces bit for bit on one kind only, and
    every machine of a cloud may share one host name.
    """
    try:
        with open("/proc/cpuinfo") as handle:
            fields = dict(
                (key.strip(), value.strip())
                for key, _, value in (line.partition(":") for line in handle)
                if key.strip() in ("vendor_id", "cpu family", "model")
            )
    except OSError:
        return None
    if len(fields) < 3:
        return None
    return f"{fields['vendor_id']} {fields['cpu family']}/{fields['model']}"


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0))


def visible_gpus() -> List[str]:
    """The ids of the GPUs this process may use (`CUDA_VISIBLE_DEVICES`, or all of them)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [gpu for gpu in visible.split(",") if gpu.strip()]
    try:
        import torch

        return [str(index) for index in range(torch.cuda.device_count())]
    except Exception:  # no usable CUDA
        return []


def slot_environment(slot: int, jobs: int, cpus: int, gpus: List[str]) -> Dict[str, str]:
    """
    The environment of job slot `slot` of `jobs` running at once: `cpus / jobs` CPU threads
    and, where several GPUs are visible, a GPU of its own; nothing for a single job.
    """
    if jobs <= 1:
        return {}
    threads = str(max(1, cpus // jobs))
    environment = {"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}
    if len(gpus) > 1:
        environment["CUDA_VISIBLE_DEVICES"] = gpus[slot % len(gpus)]
    return environment
