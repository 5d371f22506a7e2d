"""
The grid's log of attempts, `attempts.jsonl` in its output directory: one short line per attempt
at a run (directory, host, pid, shard, start and end times, outcome: "done", "failed", "reused"
or "stopped"; or "lost", an attempt whose process died holding the run, which the process that
takes the run over records, from the claim to the run's last output; and the kind of CPU it ran
on, None for a lost one).
"""

import json
import os
import socket
import time
from typing import Any, Dict, Optional, Tuple

from tft_experiments.machine import cpu_kind
from tft_experiments.runs import Run

ATTEMPTS = "attempts.jsonl"


def record_attempt(
    output_dir: str, run: Run, shard: Tuple[int, int], started: float, outcome: str
) -> None:
    """Appends an attempt of this process, in shard `shard`, that ends now."""
    _append(
        output_dir,
        run,
        socket.gethostname(),
        os.getpid(),
        "/".join(map(str, shard)),
        started,
        time.time(),
        outcome,
        cpu_kind(),
    )


def record_lost(output_dir: str, run: Run, claim: Dict[str, Any]) -> None:
    """
    The attempt of a process that died holding `run` (a machine that went away, a SIGKILL):
    from its `claim` to the last output of the run (its log, or the `out.log` of its
    directory). Its shard is unknown.
    """
    outputs = (run.directory.rstrip("/") + ".log", os.path.join(run.directory, "out.log"))
    times = [os.path.getmtime(path) for path in outputs if os.path.exists(path)]
    ended = max([t for t in times if t >= claim["claimed"]], default=claim["claimed"])
    _append(output_dir, run, claim["host"], claim["pid"], None, claim["claimed"], ended, "lost")


def _append(
    output_dir: str,
    run: Run,
    host: str,
    pid: int,
    shard: Optional[str],
    started: float,
    ended: float,
    outcome: str,
    cpu: Optional[str] = None,
) -> None:
    record = {
        "directory": os.path.relpath(run.directory, output_dir),
        "host": host,
        "pid": pid,
        "shard": shard,
        "started": round(started, 1),
        "ended": round(ended, 1),
        "outcome": outcome,
        "cpu": cpu,
    }
    with open(os.path.join(output_dir, ATTEMPTS), "a") as out:
        out.write(json.dumps(record) + "\n")
