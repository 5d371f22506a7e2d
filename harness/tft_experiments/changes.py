"""
An experiment grid run again with another spec than the one its output directory ran with.

The output directory keeps the spec it ran with (`spec.json`) and, whenever the command goes on with
a changed one, the spec before it (`spec_history.jsonl`, one a line, oldest first). A finished run
(its row in the grid's table, `table.py`) is skipped, and reported under the spec of the grid that
reports it. So a spec that trains a finished run otherwise (other `glue_overrides`, another base
checkpoint, recipe, corpus or injection seed: another `fingerprint` for the same run directory than
under the last recorded spec that had the run) would report the old scores as its own. Such a change
is refused, in one line naming the first key that changes a finished run, unless `--force` asks to
train those runs again: their directories are deleted and their rows forgotten (`accept_change`)
before the grid runs. A change that trains no finished run otherwise (more or fewer seeds, sizes,
tasks, variants or strategies; another `metric_epoch`, `retries`, `reuse_from`) extends or trims the
grid and goes ahead, said in one line.

The specs are compared as this version of the project expands them into runs, the recorded
ones too: a change of the project's code alone changes no run here (what a run's own
`config.json` says is `resumable`'s and `reuse`'s concern).
"""

import dataclasses
import json
import logging
import os
import shutil
from typing import Dict, List, Optional, Tuple

from allennlp.common.checks import ConfigurationError

from tft_experiments.locks import RunLock
from tft_experiments.outcomes import run_row, tuned_choices
from tft_experiments.reuse import NOT_TAKEN
from tft_experiments.runs import Run, grid_of
from tft_experiments.spec import ExperimentSpec
from tft_experiments.table import forget_runs

logger = logging.getLogger(__name__)

# In a grid's output directory: the spec it ran with, and those it ran with before.
SPEC_FILE = "spec.json"
HISTORY_FILE = "spec_history.jsonl"


@dataclasses.dataclass(frozen=True)
class SpecChange:
    """
    How a grid's spec differs from the specs its output directory ran with.

    # Parameters

    recorded : `str`
        The `spec.json` of the output directory.
    keys : `List[str]`
        The keys whose values differ from `recorded`'s, in the order of `ExperimentSpec`'s
        fields.
    changed : `List[Run]`
        The finished runs that the new spec trains otherwise than the last recorded spec that
        had them (another `fingerprint` for the same directory), one per directory.
    key : `Optional[str]`
        The key that changes the first of `changed`: the first whose value alone, put into
        the spec that trained it, trains it otherwise. None when nothing is `changed`.
    """

    recorded: str
    keys: List[str]
    changed: List[Run]
    key: Optional[str] = None


def spec_change(spec: ExperimentSpec) -> Optional[SpecChange]:
    """
    How `spec` differs from the specs its output directory ran with; None where it is the one
    of `spec.json` and trains no finished run otherwise, or where there is no `spec.json` (a
    new grid). A `spec.json` that cannot be read as a spec is a `ConfigurationError`: what the
    directory's runs trained is not known.
    """
    recorded = os.path.join(spec.output_dir, SPEC_FILE)
    if not os.path.isfile(recorded):
        return None
    try:
        ran = ExperimentSpec.from_file(recorded, spec.output_dir)
    except ConfigurationError as error:
        raise ConfigurationError(
            f"{error.message}; it says what this output_dir's runs trained: give another "
            f"output_dir, or delete {recorded} to report its runs as this spec's"
        ) from None
    trained = _trained_under([ran, *reversed(_history(spec))])
    changed = [
        run
        for directory, run in _runs(spec).items()
        if directory in trained and trained[directory][1] != run.fingerprint and _finished(run)
    ]
    keys = _differing_keys(ran, spec)
    if not keys and not changed:
        return None
    key = None if not changed else _changing_key(trained[changed[0].directory][0], spec, changed[0])
    return SpecChange(recorded, keys, changed, key)


def check_change(change: SpecChange, where: str, force: bool, report_only: bool) -> None:
    """
    Refuses (a one-line `ConfigurationError` naming the spec file `where` and the key) a
    change that trains finished runs otherwise, unless `force` asks to train them again; with
    `report_only` always, as nothing would train them.
    """
    if not change.changed or (force and not report_only):
        return
    grid = os.path.dirname(change.recorded)
    count = len(change.changed)
    first = os.path.relpath(change.changed[0].directory, grid)
    if report_only:
        remedy = "run it without --report-only and with --force to train them again"
    else:
        remedy = "--force to train them again there"
    runs = f"{count} finished run{'s' if count > 1 else ''}"
    raise ConfigurationError(
        f"{where}: {change.key!r} differs from the spec that output_dir {grid} ran with: {runs} "
        f"would train otherwise ({first}{', ...' if count > 1 else ''}); give another "
        f"output_dir (its reuse_from may name {grid} to take the runs that stay the same), or "
        f"{remedy}"
    )


def accept_change(change: SpecChange) -> None:
    """
    Goes on with a changed spec: keeps the spec it replaces in the history, says in one line
    what changed, and deletes the finished runs it trains otherwise (their directories and
    what lies beside them: a failure mark, a reuse that was not taken, a log; their rows are
    forgotten), so that the grid trains them again. Refuses (`ConfigurationError`) while a process
    holds one of them.
    """
    for run in change.changed:
        if RunLock(run.directory).held():
            raise ConfigurationError(
                f"{run.directory}: a process is training it now ({run.directory}.lock); stop "
                "that process before training it again with --force"
            )
    if change.keys:
        with open(change.recorded) as handle:
            replaced = json.load(handle)
        history = os.path.join(os.path.dirname(change.recorded), HISTORY_FILE)
        with open(history, "a") as handle:
            handle.write(json.dumps(replaced) + "\n")
    keys = ", ".join(repr(key) for key in change.keys) or "as before"
    if not change.changed:
        logger.info(
            "%s: the spec changed (%s), and no finished run trains otherwise: the grid goes on "
            "with it.",
            change.recorded,
            keys,
        )
        return
    count = len(change.changed)
    logger.warning(
        "%s: the spec changed (%s): training %d finished run%s again with it (--force).",
        change.recorded,
        keys,
        count,
        "s" if count > 1 else "",
    )
    for run in change.changed:
        shutil.rmtree(run.directory, ignore_errors=True)
        beside = [f"{run.directory}.failed", f"{run.directory}{NOT_TAKEN}", f"{run.directory}.log"]
        for path in beside:
            if os.path.isfile(path):
                os.remove(path)
    forget_runs(os.path.dirname(change.recorded), [grid_of(run)[1] for run in change.changed])


def _history(spec: ExperimentSpec) -> List[ExperimentSpec]:
    """
    The specs the output directory of `spec` ran with before its `spec.json`, oldest first;
    one that this version cannot read any more is left out, with a warning.
    """
    path = os.path.join(spec.output_dir, HISTORY_FILE)
    if not os.path.isfile(path):
        return []
    specs = []
    with open(path) as handle:
        for number, line in enumerate(handle, 1):
            try:
                values = json.loads(line)
                specs.append(ExperimentSpec(**{**values, "output_dir": spec.output_dir}))
            except (ValueError, TypeError, ConfigurationError) as error:
                logger.warning("%s:%d: left out, not a spec (%s)", path, number, error)
    return specs


def _trained_under(specs: List[ExperimentSpec]) -> Dict[str, Tuple[ExperimentSpec, str]]:
    """
    Every run directory of `specs` (newest first), with the first of them that has it and the
    run's fingerprint there; a tuned run under every candidate of its sweep.
    """
    trained: Dict[str, Tuple[ExperimentSpec, str]] = {}
    for spec in specs:
        for directory, run in _runs(spec, every_candidate=True).items():
            trained.setdefault(directory, (spec, run.fingerprint))
    return trained


def _runs(spec: ExperimentSpec, every_candidate: bool = False) -> Dict[str, Run]:
    """
    The runs of the grid by directory: its tuned runs as its finished sweeps choose them, or
    with `every_candidate` under each candidate of the sweep.
    """
    runs: List[Run] = [*spec.injection_runs(), *spec.sweep_runs()]
    if not every_candidate:
        runs += spec.glue_runs(tuned_choices(spec))
    elif not spec.sweep:
        runs += spec.glue_runs()
    else:
        for candidate in spec.candidates():
            runs += spec.glue_runs({key: candidate for key in spec.tuned_keys()})
    by_directory: Dict[str, Run] = {}
    for run in runs:
        by_directory.setdefault(run.directory, run)
    return by_directory


def _differing_keys(ran: ExperimentSpec, spec: ExperimentSpec) -> List[str]:
    """The keys whose values differ (as `spec.json` holds them: defaulted seeds given)."""
    theirs, mine = json.loads(ran.dumps()), json.loads(spec.dumps())
    return [
        field.name
        for field in dataclasses.fields(ExperimentSpec)
        if field.name != "output_dir" and theirs[field.name] != mine[field.name]
    ]


def _finished(run: Run) -> bool:
    """A run with a row in its grid's table (an injection's encoder need not be on disk)."""
    return run_row(run) is not None


def _changing_key(ran: ExperimentSpec, spec: ExperimentSpec, run: Run) -> str:
    """
    The first key whose value in `spec`, put into `ran` alone, trains `run` otherwise than
    `ran` does; the first key that differs where none does alone.
    """
    keys = _differing_keys(ran, spec)
    theirs = _runs(ran, every_candidate=True)[run.directory].fingerprint
    values = {field.name: getattr(ran, field.name) for field in dataclasses.fields(ran)}
    for key in keys:
        try:
            between = ExperimentSpec(**{**values, key: getattr(spec, key)})
        except ConfigurationError:
            continue  # a value that only goes with others
        mine = _runs(between, every_candidate=True).get(run.directory)
        if mine is not None and mine.fingerprint != theirs:
            return key
    return keys[0] if keys else "output_dir"
