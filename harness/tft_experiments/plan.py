"""
The order of an experiment grid's runs and what each waits for: injections, then the recipe
sweep on the base models, then the reported grid seed by seed. A fine-tuning of an injected
encoder waits for its injection, unless it is to be taken from another grid that fine-tuned the
encoder this grid recorded (`reuse.may_be_taken`); the tuned runs of a (base, task, size) wait
for the sweep that chooses their recipe, and appear once it has. Everything here reads the
finished runs.
"""

from typing import Dict, List, Optional, Set, Tuple, Union

from tft_experiments.expansion import TunedKey
from tft_experiments.outcomes import is_finished, read_fingerprint, tuned_choice
from tft_experiments.reuse import may_be_taken
from tft_experiments.runs import InjectionRun, Run, size_name
from tft_experiments.spec import ExperimentSpec
from tft_experiments.strategies.cross import CROSS


class TunedPlaceholder:
    """Stands for the tuned runs of one (base, task, size) until their sweep has finished."""

    def __init__(self, key: TunedKey, sweep_directory: str) -> None:
        base, variant, strategy, task, size = key
        own = f"{variant}/{strategy}/" if (variant, strategy) != ("none", CROSS) else ""
        self.directory = f"tuned:{base}/{own}{task}/n{size_name(size)}"
        self.sweep_directory = sweep_directory


Planned = Union[Run, TunedPlaceholder]
Step = Tuple[Planned, Optional[Run]]
"""A run (or placeholder) and the unfinished run it must wait for (None: it can start)."""


def grid_plan(spec: ExperimentSpec) -> Tuple[List[Step], Set[str]]:
    """
    Every run of the grid in order, each once with what it waits for, and the injections that
    no unfinished fine-tuning waits for, nor may (a base whose sweep has not chosen yet needs
    all its injections but those recorded and not built: they wait for the choice, which may
    leave nothing to train).
    """
    injections = list(spec.injection_runs())
    steps: List[Step] = [(injection, None) for injection in injections]
    # A sweep run of an injected variant (`sweep_variants`) waits for its injection.
    steps += [(run, _blocker(spec, run)) for run in spec.sweep_runs()]
    choices, waiting, needed = _tuned_steps(spec, injections)
    steps += waiting
    for glue_run in spec.sweep_runs():
        injection = spec.injection_of(glue_run)
        if injection is not None and not is_finished(glue_run):
            needed.add(injection.directory)
    for glue_run in spec.glue_runs(choices):
        injection = spec.injection_of(glue_run)
        blocker = None
        if injection is not None and not is_finished(glue_run):
            if is_finished(injection):
                needed.add(injection.directory)
            elif not may_be_taken(spec, glue_run, injection):
                needed.add(injection.directory)
                blocker = injection
        steps.append((glue_run, blocker))
    unneeded = {run.directory for run in injections} - needed
    # A sweep run that is also a grid run appears once.
    once: Dict[str, Step] = {}
    for step in steps:
        once.setdefault(step[0].directory, step)
    return list(once.values()), unneeded


def _blocker(spec: ExperimentSpec, run: Run) -> Optional[Run]:
    """The unfinished injection a sweep run fine-tunes, if any."""
    injection = spec.injection_of(run) if not isinstance(run, InjectionRun) else None
    if injection is None or is_finished(run) or is_finished(injection):
        return None
    return injection


def _tuned_steps(
    spec: ExperimentSpec, injections: List[InjectionRun]
) -> Tuple[Dict[TunedKey, str], List[Step], Set[str]]:
    """
    The sweep's choice of every (base, task, size) whose sweep has finished; a placeholder for
    each other one, waiting for its first unfinished sweep run; the injections of their bases.
    """
    choices: Dict[TunedKey, str] = {}
    waiting: List[Step] = []
    needed: Set[str] = set()
    for key in spec.tuned_keys():
        choice = tuned_choice(spec, key)
        if choice is not None:
            choices[key] = choice
            continue
        pending = next(run for run in spec.sweep_runs_of(key) if not is_finished(run))
        waiting.append((TunedPlaceholder(key, pending.directory), pending))
        needed.update(
            run.directory
            for run in injections
            if run.base == key[0] and (is_finished(run) or read_fingerprint(run) is None)
        )
    return choices, waiting, needed
