"""
A grid's table of finished runs: `runs.jsonl` in its output directory, one JSON object a line,
the record of every run that finished there (trained, or taken from another grid). It is what
the grid's report, a resumed grid and the grids that reuse its runs read: a run with a row is
finished, whether its directory is on disk or not (run directories are not kept in git).

A row's keys, in this order (the optional ones only where known):

- `directory`: the run's directory relative to the output directory, e.g.
  `glue/minilm/none/paper/mrpc/n1000/seed1` or `injection/minilm/tft`;
- `config_sha256`: `config_fingerprint` of the config the run trained (its `config.json`);
- `started`, `ended`: the attempt that finished it (Unix seconds, from `attempts.jsonl`);
- `reused_from`: the grid it was taken from (as that grid's `reuse_from` names it);
- `encoder_sha256`: an injection's record of the encoder it exported (`encoder_fingerprint`);
- `parameters`: the counts `tft_parameter_counts` wrote (`trainable`, `frozen`, `total`);
- `metrics`: the run's `metrics.json`, as AllenNLP wrote it;
- `epochs`: its `metrics_epoch_<k>.json` in epoch order, where a grid keeps them.

Rows are appended (`append_row`) as runs finish, by every process that shares the grid, and a
line is never rewritten: the last line of a directory holds. A run trained again appends its new
row; one deleted to train again (`--force`) is forgotten (`forget_runs`: a line
`{"directory": ..., "forgotten": true}`), so that it counts as unfinished until it finishes
again. A directory finished without a row (by a harness before tables, or a row that could not be
written) reads as the row its files make (`row_from_directory`), and is written to the table
(`adopt_finished_runs`) when a grid runs or reports.
"""

import json
import logging
import os
import threading
from typing import Any, Dict, Iterator, List, Optional, Tuple

from tft_allennlp.training.callbacks.parameter_counts import PARAMETER_COUNTS
from tft_experiments.trained_configs import config_fingerprint

logger = logging.getLogger(__name__)

TABLE = "runs.jsonl"
# Kept in the directory of a run finished before tables (read into its row, never written now):
# an injection's encoder fingerprint, and where a reused run came from.
FINGERPRINT_FILE = "encoder_fingerprint.json"
REUSED_FROM_FILE = "reused_from.json"
KEYS = (
    "directory",
    "config_sha256",
    "started",
    "ended",
    "reused_from",
    "encoder_sha256",
    "parameters",
    "metrics",
    "epochs",
)
# The outcomes of `attempts.jsonl` that finish a run.
FINISHING = ("done", "reused")

_cache: Dict[str, Tuple[Tuple[int, int], Dict[str, Dict[str, Any]]]] = {}
_cache_lock = threading.Lock()


def table_path(grid: str) -> str:
    return os.path.join(grid, TABLE)


def read_table(grid: str) -> Dict[str, Dict[str, Any]]:
    """
    The last line of every directory of the table of `grid` (a forgotten run's too); empty
    without a table. A line that is no row (a disk that filled up) is named in a warning and
    left out. Read again only when the file changed.
    """
    path = table_path(grid)
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return {}
    version = (stat.st_mtime_ns, stat.st_size)
    key = os.path.abspath(path)
    with _cache_lock:
        cached = _cache.get(key)
    if cached is not None and cached[0] == version:
        return cached[1]
    rows: Dict[str, Dict[str, Any]] = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                rows[row["directory"]] = row
            except (ValueError, TypeError, KeyError) as error:
                logger.warning(
                    "%s:%d: not a row of finished runs (%s); left out", path, number, error
                )
    with _cache_lock:
        _cache[key] = (version, rows)
    return rows


def finished_row(grid: str, relative: str) -> Optional[Dict[str, Any]]:
    """
    The row of the run `relative` of `grid`: its last line in the table (None if forgotten),
    else the row its directory makes if the run finished there (`row_from_directory`).
    """
    row = read_table(grid).get(relative)
    if row is not None:
        return None if row.get("forgotten") else row
    return row_from_directory(grid, relative)


def finished_rows(grid: str) -> Dict[str, Dict[str, Any]]:
    """Every finished run of `grid` by directory: the table's, then those of directories alone."""
    rows = {key: row for key, row in read_table(grid).items() if not row.get("forgotten")}
    for relative in unrecorded_directories(grid):
        row = row_from_directory(grid, relative)
        if row is not None:
            rows[relative] = row
    return rows


def append_row(grid: str, row: Dict[str, Any]) -> None:
    """Appends `row` (its keys in `KEYS` order) to the table of `grid`, in one write."""
    ordered = {key: row[key] for key in KEYS if row.get(key) is not None}
    _append(grid, json.dumps(ordered) + "\n")


def forget_runs(grid: str, relatives: List[str]) -> None:
    """Marks the runs `relatives` of `grid` unfinished (they are to be trained again)."""
    lines = [
        json.dumps({"directory": relative, "forgotten": True}) + "\n" for relative in relatives
    ]
    if lines:
        _append(grid, "".join(lines))


def _append(grid: str, text: str) -> None:
    os.makedirs(grid, exist_ok=True)
    # O_APPEND and one write: lines of processes that share the grid never interleave.
    handle = os.open(table_path(grid), os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        # A last line cut short (a disk that filled up) stays a line of its own.
        if os.fstat(handle).st_size and os.pread(handle, 1, os.fstat(handle).st_size - 1) != b"\n":
            text = "\n" + text
        os.write(handle, text.encode("utf-8"))
    finally:
        os.close(handle)


def row_from_directory(
    grid: str, relative: str, epochs: bool = False, **known: Any
) -> Optional[Dict[str, Any]]:
    """
    The row that the directory `relative` of `grid` makes, if the run finished there (its
    `metrics.json`; a damaged one is named in a warning, and the run counts as unfinished):
    with `known` keys added (`started`, `ended`, `encoder_sha256`), and with `epochs` its
    per-epoch metrics.
    """
    directory = os.path.join(grid, relative)
    metrics = read_metrics_file(os.path.join(directory, "metrics.json"))
    if metrics is None:
        return None
    row: Dict[str, Any] = {"directory": relative}
    config = _read_json(os.path.join(directory, "config.json"))
    if isinstance(config, dict):
        row["config_sha256"] = config_fingerprint(config, grid)
    reused = _read_json(os.path.join(directory, REUSED_FROM_FILE))
    if isinstance(reused, dict) and "grid" in reused:
        row["reused_from"] = reused["grid"]
    fingerprint = _read_json(os.path.join(directory, FINGERPRINT_FILE))
    if isinstance(fingerprint, dict) and "sha256" in fingerprint:
        row["encoder_sha256"] = fingerprint["sha256"]
    parameters = _read_json(os.path.join(directory, PARAMETER_COUNTS))
    if isinstance(parameters, dict):
        row["parameters"] = parameters
    row["metrics"] = metrics
    if epochs:
        per_epoch = list(_epoch_metrics(directory))
        if per_epoch:
            row["epochs"] = per_epoch
    row.update({key: value for key, value in known.items() if value is not None})
    return {key: row[key] for key in KEYS if key in row}


def _epoch_metrics(directory: str) -> Iterator[Dict[str, Any]]:
    epoch = 0
    while True:
        metrics = _read_json(os.path.join(directory, f"metrics_epoch_{epoch}.json"))
        if not isinstance(metrics, dict):
            return
        yield metrics
        epoch += 1


def unrecorded_directories(grid: str) -> List[str]:
    """The run directories of `grid` with a `metrics.json` and no line in its table, sorted."""
    recorded = read_table(grid)
    found = []
    for kind in ("glue", "sweep", "injection"):
        for root, directories, files in os.walk(os.path.join(grid, kind)):
            directories[:] = [name for name in directories if name != "encoder"]
            if "metrics.json" in files:
                relative = os.path.relpath(root, grid).replace(os.sep, "/")
                if relative not in recorded:
                    found.append(relative)
    return sorted(found)


def adopt_finished_runs(grid: str, epochs: bool = False) -> int:
    """
    Appends a row for every run directory of `grid` that finished without one
    (`unrecorded_directories`), its times from the grid's `attempts.jsonl` (the last attempt
    that finished it), with `epochs` its per-epoch metrics; how many. This also builds the
    table of a grid made before tables, from its run directories.
    """
    times = finishing_attempts(grid)
    adopted = 0
    for relative in unrecorded_directories(grid):
        started, ended = times.get(relative, (None, None))
        row = row_from_directory(grid, relative, epochs, started=started, ended=ended)
        if row is not None:
            append_row(grid, row)
            adopted += 1
    return adopted


def finishing_attempts(grid: str) -> Dict[str, Tuple[float, float]]:
    """Directory -> (started, ended) of its last attempt that finished it."""
    times: Dict[str, Tuple[float, float]] = {}
    try:
        with open(os.path.join(grid, "attempts.jsonl"), encoding="utf-8") as handle:
            for line in handle:
                try:
                    attempt = json.loads(line)
                except ValueError:
                    continue
                if attempt.get("outcome") in FINISHING:
                    times[attempt["directory"]] = (attempt["started"], attempt["ended"])
    except FileNotFoundError:
        pass
    return times


def read_metrics_file(path: str) -> Optional[Dict[str, Any]]:
    """The metrics in `path`; None if it is missing, or damaged (with a warning naming it)."""
    try:
        with open(path, encoding="utf-8") as handle:
            metrics = json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        logger.warning("%s: damaged (%s); its run counts as unfinished.", path, error)
        return None
    if not isinstance(metrics, dict):
        logger.warning("%s: damaged (not a JSON object); its run counts as unfinished.", path)
        return None
    return metrics


def _read_json(path: str) -> Any:
    """The JSON in `path`; None if it is missing or no JSON."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None
