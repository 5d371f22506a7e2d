"""
The child processes the anchor benchmark runs each side in, and the environment they get.
"""

import os
import resource
import subprocess
import sys
import tempfile
from typing import Dict, List

BENCHMARKS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.abspath(os.path.join(BENCHMARKS, ".."))
# The entry point, which each side re-runs in a fresh process (with `--side`).
SCRIPT = os.path.join(BENCHMARKS, "anchor_benchmark.py")
# The children's environment: filled in by the entry point once the options are parsed.
ENVIRONMENT: Dict[str, str] = {}


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_child(command: List[str], environment: Dict[str, str], cwd: str = ROOT) -> tuple:
    """Runs `command`; returns (stdout, peak RSS of that process in MB)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, cwd=cwd, env=environment, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if process.returncode != 0:
            sys.exit(f"{' '.join(command[:4])} ... failed:\n{err.read()[-3000:]}")
        return out.read(), usage.ru_maxrss / 1024
