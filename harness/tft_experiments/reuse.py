"""
Taking finished runs from other experiment grids (`ExperimentSpec.reuse_from`) instead of
running them again, from their tables of finished runs (`table.py`): their run directories need
not be on disk.

A run of this grid is reused from another grid when the same run directory (relative to each
grid's output directory) finished there with the config this grid would train: the
`config_sha256` of its row is this config's `config_fingerprint`, which reads a path inside
either grid (an injected encoder) relative to it and leaves out what trains nothing
(`trained_config`: trainer callbacks that only write records, how the archive stores the
encoder, a vocabulary of the task's own labels). A fine-tuning of an injected encoder is reused
only from a grid that fine-tuned the very encoder this grid holds, not another build of it:
where both grids recorded the fingerprint of that injection's encoder, a grid that recorded the
same one (its encoder need not be on disk: encoders are not kept in git); otherwise a grid whose
finished injection has the same origin as this grid's (`injection_origin`: the grid that trained
it, followed through the grids it was reused from).

A reused run gets the other run's row, with `reused_from` naming that grid, and whatever of its
directory is on disk but its weights (`*.th`, `model.tar.gz`); an injection also gets its
exported encoder, hard-linked where the file system allows.

Where no grid holds the injection with its encoder (a fresh machine), its record alone is taken
from one that finished it with the same config and recorded its encoder's fingerprint
(`take_injection_record`): the fine-tunings of that encoder are then taken by the fingerprint
(`may_be_taken` tells the plan which may be, before their configs are compared), and only a
fine-tuning that none finished rebuilds the injection, which must export that very encoder.
"""

import dataclasses
import json
import logging
import os
import shutil
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar

from allennlp.common import Params

from tft_allennlp.common.folder_lock import LOCK_FILE
from tft_allennlp.common.transformer_source import ARCHIVED_TRANSFORMERS
from tft_experiments.outcomes import is_finished, read_fingerprint, run_row
from tft_experiments.runs import GlueRun, InjectionRun, Run
from tft_experiments.spec import ExperimentSpec
from tft_experiments.table import FINGERPRINT_FILE, REUSED_FROM_FILE, append_row, finished_row
from tft_experiments.trained_configs import config_fingerprint, trained_config

logger = logging.getLogger(__name__)

RunT = TypeVar("RunT", bound=Run)

# Beside a fine-tuning that `may_be_taken` but was not (another config under its name).
NOT_TAKEN = ".not_taken"


def reuse_run(
    spec: ExperimentSpec, run: Run, config: Dict[str, Any], recorded: Optional[str]
) -> bool:
    """
    Takes `run` of the grid `spec` from the first grid of its `reuse_from` that finished it with
    `config` (this grid's config of it, `rendered_config`); False when none did. An injection
    that `recorded` the fingerprint of its encoder is taken only from a grid that recorded the
    same.
    """
    grids = list(spec.reuse_from)
    injection = run.injection if isinstance(run, GlueRun) else None
    if injection is not None:
        grids = grids_with_same_encoder(injection, spec.output_dir, grids)
    if isinstance(run, InjectionRun) and recorded is not None:
        grids = [
            grid
            for grid in grids
            if read_fingerprint(in_grid(run, spec.output_dir, grid)) == recorded
        ]
    if not grids:
        return False
    relative = os.path.relpath(run.directory, spec.output_dir)
    differences: List[Tuple[str, Optional[str]]] = []
    grid = find_reusable(run, config, spec.output_dir, grids, differences)
    if grid is None:
        # A run no grid finished just starts; one finished with another config says where, so
        # that a reuse the user expected and did not get can be traced to its key (where the
        # other run's config.json is on disk to say it).
        for theirs, key in differences:
            where = f"at {key}" if key is not None else "(another config_sha256)"
            logger.info("Not reusing %s from %s: its config differs %s", relative, theirs, where)
        return False
    copy_run(grid, relative, spec.output_dir, encoder=isinstance(run, InjectionRun))
    logger.info("Reused %s from %s", relative, grid)
    return True


def take_injection_record(
    spec: ExperimentSpec, run: InjectionRun, config: Dict[str, Any]
) -> Optional[str]:
    """
    For an injection of the grid `spec` that recorded nothing and that no grid of `reuse_from`
    holds with its encoder: the record (its row, and its directory but the encoder where on
    disk) of the first grid of `reuse_from` that finished it with `config` and recorded its
    encoder's fingerprint; that grid, or None. The injection is still unfinished here
    (`is_finished`: its encoder is not built).
    """
    grid = find_reusable(run, config, spec.output_dir, spec.reuse_from, finished=_recorded)
    if grid is None:
        return None
    relative = os.path.relpath(run.directory, spec.output_dir)
    copy_run(grid, relative, spec.output_dir)
    logger.info(
        "Took the record of %s from %s, without its encoder: rebuilt if a fine-tuning needs it",
        relative,
        grid,
    )
    return grid


def _recorded(run: Run) -> bool:
    """An injection that finished and recorded its encoder's fingerprint, built or not."""
    return isinstance(run, InjectionRun) and read_fingerprint(run) is not None


def may_be_taken(spec: ExperimentSpec, run: GlueRun, injection: InjectionRun) -> bool:
    """
    Whether a grid of `reuse_from` finished the fine-tuning `run` of the injection `injection`
    (not built here) of the very encoder this grid recorded for it: then `reuse_run` may take it
    without the encoder, if its config is the same (a run it did not take is marked
    `DIRECTORY.not_taken`, `mark_not_taken`, so that every process plans it to wait).
    """
    mine = read_fingerprint(injection)
    if mine is None or os.path.exists(run.directory.rstrip("/") + NOT_TAKEN):
        return False
    return any(
        is_finished(in_grid(run, spec.output_dir, grid))
        and read_fingerprint(in_grid(injection, spec.output_dir, grid)) == mine
        for grid in spec.reuse_from
    )


def mark_not_taken(run: GlueRun) -> None:
    """Marks a fine-tuning that `may_be_taken` said may be taken, and was not."""
    os.makedirs(os.path.dirname(run.directory.rstrip("/")), exist_ok=True)
    with open(run.directory.rstrip("/") + NOT_TAKEN, "w"):
        pass


def rendered_config(
    config: str, overrides: Dict[str, Any], environment: Dict[str, str]
) -> Dict[str, Any]:
    """
    The config `allennlp train CONFIG -o OVERRIDES` writes to its `config.json` when run with
    `environment` added to this process's (jsonnet's external variables).
    """
    return Params.from_file(config, json.dumps(overrides), {**os.environ, **environment}).as_dict(
        quiet=True
    )


def config_difference(
    mine: Any, theirs: Any, their_grid: str, my_grid: str, key: str = ""
) -> Optional[str]:
    """
    The first key (dotted) whose value differs between this grid's config `mine` and the other
    grid's `theirs`, reading a path inside `their_grid` as the same path inside `my_grid`;
    None when they are the same config.
    """
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for name in sorted(set(mine) | set(theirs)):
            inner = f"{key}.{name}" if key else name
            if name not in mine or name not in theirs:
                return inner
            difference = config_difference(mine[name], theirs[name], their_grid, my_grid, inner)
            if difference is not None:
                return difference
        return None
    if isinstance(mine, list) and isinstance(theirs, list):
        if len(mine) != len(theirs):
            return key
        for index, (one, other) in enumerate(zip(mine, theirs)):
            difference = config_difference(one, other, their_grid, my_grid, f"{key}.{index}")
            if difference is not None:
                return difference
        return None
    if isinstance(theirs, str):
        theirs = _moved(theirs, their_grid, my_grid)
    return None if mine == theirs else key


def _moved(path: str, their_grid: str, my_grid: str) -> str:
    """`path` inside `their_grid` -> the same place inside `my_grid`; anything else unchanged."""
    root = os.path.abspath(their_grid)
    absolute = os.path.abspath(path)
    if absolute != root and absolute.startswith(root + os.sep):
        return os.path.join(my_grid, os.path.relpath(absolute, root))
    return path


def reused_source(directory: str, grid: str) -> Optional[str]:
    """
    The grid that the run `directory` of `grid` was reused from (None if it ran there or has
    not finished).
    """
    row = finished_row(grid, os.path.relpath(directory, grid).replace(os.sep, "/"))
    return None if row is None else row.get("reused_from")


def injection_origin(directory: str, grid: str) -> str:
    """
    The grid that trained the injection `directory` of `grid` (an absolute path): `grid` itself
    if it ran there, else the origin of the run it was reused from.
    """
    seen = set()
    while True:
        source = reused_source(directory, grid)
        directory = os.path.relpath(directory, grid)
        grid = os.path.realpath(grid)
        if source is None or grid in seen:
            return grid
        seen.add(grid)
        directory = os.path.join(source, directory)
        grid = source


def in_grid(run: RunT, my_grid: str, grid: str) -> RunT:
    """This grid's `run` (in `my_grid`) as the same run directory of `grid`."""
    relative = os.path.relpath(run.directory, my_grid)
    return dataclasses.replace(run, directory=os.path.join(grid, relative))


def grids_with_same_encoder(
    injection: InjectionRun, my_grid: str, grids: Sequence[str]
) -> List[str]:
    """
    Those of `grids` that fine-tuned the very encoder this grid's `injection` (in `my_grid`)
    holds: where both grids record the fingerprint of that injection's encoder
    (`read_fingerprint`), those that recorded the same one, whether their encoder is on disk or
    not; otherwise those that finished the injection with the same origin (`injection_origin`).
    """
    mine = read_fingerprint(injection)
    origin = injection_origin(injection.directory, my_grid)
    kept = []
    for grid in grids:
        theirs = in_grid(injection, my_grid, grid)
        recorded = read_fingerprint(theirs)
        if mine is not None and recorded is not None:
            same = recorded == mine
        else:
            same = is_finished(theirs) and injection_origin(theirs.directory, grid) == origin
        if same:
            kept.append(grid)
    return kept


def find_reusable(
    run: Run,
    config: Dict[str, Any],
    my_grid: str,
    grids: Sequence[str],
    differences: Optional[List[Tuple[str, Optional[str]]]] = None,
    finished: Callable[[Run], bool] = is_finished,
) -> Optional[str]:
    """
    The first of `grids` where this grid's `run` (in `my_grid`) is `finished` (by default
    `is_finished`: an injection with its exported encoder) with `config` (this grid's config of
    it: the same `config_fingerprint`); None if none did. Each grid before it that finished the
    run with another config is appended to `differences`, with the first key that differs
    (`config_difference`) where its `config.json` is on disk, else None.
    """
    mine = config_fingerprint(config, my_grid)
    for grid in grids:
        theirs = in_grid(run, my_grid, grid)
        row = run_row(theirs)
        if row is None or row.get("config_sha256") is None or not finished(theirs):
            continue
        if row["config_sha256"] == mine:
            return grid
        if differences is not None:
            differences.append((grid, _differing_key(theirs.directory, config, grid, my_grid)))
    return None


def _differing_key(
    directory: str, config: Dict[str, Any], grid: str, my_grid: str
) -> Optional[str]:
    """The first key where the `config.json` of `directory` differs from `config`, if on disk."""
    try:
        with open(os.path.join(directory, "config.json")) as handle:
            theirs = json.load(handle)
    except (OSError, ValueError):
        return None
    return config_difference(trained_config(config), trained_config(theirs), grid, my_grid)


def copy_run(grid: str, relative: str, my_grid: str, encoder: bool = False) -> None:
    """
    Takes the finished run `relative` of `grid` into `my_grid`: whatever of its directory is on
    disk but its weights, with `encoder` its exported encoder too (hard links where possible),
    then its row, with `reused_from` naming `grid` (last, so that a run interrupted while
    copying is unfinished).
    """
    started = time.time()
    source = os.path.join(grid, relative)
    target = os.path.join(my_grid, relative)
    row = finished_row(grid, relative)
    if row is None:
        raise FileNotFoundError(f"{source}: not a finished run of {grid}")
    if os.path.isdir(target):
        shutil.rmtree(target)  # what an interrupted attempt left
    if os.path.isdir(source):
        ignored = ["metrics.json", "encoder", "*.th", "model.tar.gz", "*.lock", "*" + LOCK_FILE]
        # Records of the other grid's run that its row holds; the archive's copy of the base.
        ignored += [REUSED_FROM_FILE, FINGERPRINT_FILE, ARCHIVED_TRANSFORMERS]
        shutil.copytree(source, target, ignore=shutil.ignore_patterns(*ignored))
    if encoder:
        shutil.copytree(
            os.path.join(source, "encoder"),
            os.path.join(target, "encoder"),
            copy_function=_link_or_copy,
        )
    times = {"started": round(started, 1), "ended": round(time.time(), 1)}
    append_row(my_grid, {**row, **times, "reused_from": grid})


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)
