"""
`allennlp tft-experiment SPEC`: runs a grid of injections and GLUE fine-tunings resumably,
in parallel (`--jobs`) and across machines (`--shard`), records every finished run in the
grid's table (`runs.jsonl`, `tft_experiments/table.py`), and writes `runs.csv`, `results.md`
and `scores.png` from it to the spec's output directory.

Before it writes or starts anything, the spec is checked whole (`ExperimentSpec`, and the files
of its custom tasks, `experiments/inputs.py`) and compared with the spec the output directory
ran with (`experiments/changes.py`): a change that would report finished runs as trained with
it is refused in one line, unless `--force` trains them again. Processes that run the same spec
share the grid (`--shard`, `--jobs` elsewhere); one that would change the spec while another
runs the grid is refused in one line (`tft_experiments.locks.hold_grid`).
"""

import argparse
import collections
import importlib.util
import logging
import os
import signal
import sys
import tempfile
from typing import Dict, List, Optional, Tuple

from allennlp.commands.subcommand import Subcommand
from allennlp.common.checks import ConfigurationError
from allennlp.common.util import SigTermReceived

from tft_allennlp.commands.arguments import positive_float, positive_int
from tft_allennlp.common.atomic_files import atomic_output
from tft_allennlp.common.folder_lock import FolderLock
from tft_allennlp.common.input_problems import MalformedInputError, check_regular_file
from tft_allennlp.common.output_paths import add_force_argument, check_output_directory
from tft_allennlp.training.callbacks.mlflow import store_uri
from tft_experiments.changes import SPEC_FILE, accept_change, check_change, spec_change
from tft_experiments.inputs import check_inputs
from tft_experiments.locks import hold_grid
from tft_experiments.outcomes import collect_results
from tft_experiments.paired import (
    Reference,
    customised_variant,
    full_injection,
    other_injection_seed,
    paired_table,
    write_paired_csv,
)
from tft_experiments.report import markdown_table, plot, sweep_table, write_csv
from tft_experiments.runner import ExperimentRunner, Status, parse_shard
from tft_experiments.spec import ExperimentSpec
from tft_experiments.strategies.cross import CROSS
from tft_experiments.table import TABLE, adopt_finished_runs
from tft_experiments.tracking import GridTracking
from tft_experiments.training import RunStopped

logger = logging.getLogger(__name__)

# Files that only an experiment's output directory holds.
EXPERIMENT_FILES = (SPEC_FILE, "attempts.jsonl", TABLE)


@Subcommand.register("tft-experiment")
class Experiment(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Run an experiment grid (base models x injection variants x GLUE tasks x training "
            "sizes x seeds x recipes, optionally with a recipe sweep on the base models) from a "
            "JSON/jsonnet spec, skipping finished runs, and write a CSV of every run, a markdown "
            "table and plots."
        )
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("spec", help="experiment spec (JSON or jsonnet)")
        subparser.add_argument("--output-dir", help="overrides the spec's output_dir")
        subparser.add_argument(
            "--report-only", action="store_true", help="write the outputs from finished runs only"
        )
        subparser.add_argument(
            "--jobs",
            type=positive_int,
            default=1,
            help="runs at once, each with CPUs/N threads and, where several GPUs are visible, "
            "one GPU",
        )
        subparser.add_argument(
            "--shard",
            type=_shard,
            default="0/1",
            metavar="I/N",
            help="run only shard I of N (0-based), e.g. one per machine or Slurm array task, "
            "all writing to the same output directory",
        )
        subparser.add_argument(
            "--no-wait",
            action="store_true",
            help="leave runs that wait for another shard's injection or sweep, instead of waiting",
        )
        subparser.add_argument(
            "--no-injections",
            action="store_true",
            help="start no injection: fine-tune what other processes inject (one injection at "
            "a time on a machine whose memory two would not fit)",
        )
        subparser.add_argument(
            "--poll-seconds",
            type=positive_float,
            default=30.0,
            help="how often to look for other shards' runs while waiting",
        )
        subparser.add_argument(
            "--mlflow",
            nargs="?",
            const="",
            metavar="TRACKING_URI",
            help="log each run that finishes to MLflow, tagged with its task, variant, size and "
            "seed, in the experiment named after the spec (or MLFLOW_EXPERIMENT_NAME): to the "
            "store TRACKING_URI, else MLFLOW_TRACKING_URI, else mlflow.db here",
        )
        add_force_argument(
            subparser,
            "the outputs in an output directory that holds no experiment's spec.json, or the "
            "finished runs that a changed spec trains otherwise (trained again)",
        )
        subparser.set_defaults(func=_experiment_from_args)
        return subparser


def _shard(text: str) -> Tuple[int, int]:
    try:
        return parse_shard(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _experiment_from_args(args: argparse.Namespace) -> None:
    # jsonnet aborts the whole process on a directory, and a missing file is a traceback.
    try:
        check_regular_file(args.spec)  # before `open`, which waits on a named pipe
        open(args.spec, "rb").close()
    except OSError as error:
        sys.exit(f"tft-experiment: {args.spec}: {error.strerror}")
    except MalformedInputError as error:
        sys.exit(f"tft-experiment: {error}")
    if args.output_dir is not None and os.path.isfile(args.output_dir):
        sys.exit(f"tft-experiment: --output-dir {args.output_dir}: is a file, not a directory")
    try:
        spec = ExperimentSpec.from_file(args.spec, args.output_dir)
        # Held to the end, shared with the processes that run the same spec.
        grid = hold_grid(spec.output_dir, lambda: spec_change(spec) is not None)
    except ConfigurationError as error:
        sys.exit(f"tft-experiment: {error}")
    try:
        _run_holding(args, spec, grid)
    finally:
        grid.release()


def _run_holding(args: argparse.Namespace, spec: ExperimentSpec, grid: FolderLock) -> None:
    """The command, once it holds the grid (`hold_grid`)."""
    tracking = None if args.report_only else _tracking(args)
    try:
        # An experiment's output directory (with its spec.json or attempts.jsonl) is resumed;
        # any other that holds files is someone else's.
        check_output_directory(spec.output_dir, args.force, own=EXPERIMENT_FILES)
        # Before anything is written or started: a spec that would report the directory's
        # finished runs as trained with it is refused (or, with --force, trains them again),
        # and the files that the runs left to train read are there.
        change = spec_change(spec)
        if change is not None:
            check_change(change, args.spec, args.force, args.report_only)
        if not args.report_only:
            check_inputs(spec, args.spec, [] if change is None else change.changed)
        if change is not None:
            accept_change(change)
    except ConfigurationError as error:
        sys.exit(f"tft-experiment: {error}")
    statuses = {}
    if not args.report_only:
        # The spec the grid runs with, written while no other process runs it: then the
        # processes with the same spec may join.
        write_spec(spec)
        grid.share()
        try:
            statuses = run_experiment(
                spec,
                args.jobs,
                args.shard,
                not args.no_wait,
                args.poll_seconds,
                injections=not args.no_injections,
                tracking=tracking,
            )
        except (KeyboardInterrupt, SigTermReceived, RunStopped) as error:
            number = (
                error.signal
                if isinstance(error, RunStopped)
                else (signal.SIGINT if isinstance(error, KeyboardInterrupt) else signal.SIGTERM)
            )
            # What finished before the stop is reported, as a finished grid's would be.
            paths, reported = write_outputs(spec)
            written = f"; report of {reported} finished runs: {', '.join(paths)}" if paths else ""
            print(
                f"tft-experiment: stopped on {number.name}; the runs in training saved a "
                f"checkpoint, and the same command goes on from there{written}.",
                file=sys.stderr,
            )
            sys.exit(128 + number)
    counts = collections.Counter(str(status) for status in statuses.values())
    paths, reported = write_outputs(spec)
    ran = ", ".join(f"{number} {status}" for status, number in sorted(counts.items()))
    written = f"report of {reported} finished runs: {', '.join(paths)}" if paths else ""
    print("; ".join(part for part in (f"runs: {ran}" if ran else "", written) if part))
    if counts["failed"] or counts["waiting"]:
        sys.exit(1)


def _tuning(spec: ExperimentSpec) -> str:
    """How the report says the tuned recipes were chosen."""
    whose = "each variant's own sweep" if spec.sweep_variants else "the sweep on the base model"
    if spec.sweep_held_out_fraction is None:
        return whose + (", on the dev set" if spec.sweep_variants else "")
    return f"{whose}, on {spec.sweep_held_out_fraction:g} of the training data held out"


def _tracking(args: argparse.Namespace) -> Optional[GridTracking]:
    """Where `--mlflow` logs the runs, if given."""
    if args.mlflow is None:
        return None
    if importlib.util.find_spec("mlflow") is None:
        sys.exit(
            "tft-experiment: --mlflow needs the mlflow package; it is not installed: "
            "pip install 'tft-allennlp[tracking]'"
        )
    name = os.environ.get("MLFLOW_EXPERIMENT_NAME")
    if not name:
        name = os.path.splitext(os.path.basename(args.spec))[0]
    return GridTracking(store_uri(args.mlflow or None), name)


def run_experiment(
    spec: ExperimentSpec,
    jobs: int = 1,
    shard: Tuple[int, int] = (0, 1),
    wait: bool = True,
    poll_seconds: float = 30.0,
    injections: bool = True,
    tracking: Optional[GridTracking] = None,
) -> Dict[str, Status]:
    write_spec(spec)
    return ExperimentRunner(spec, jobs, shard, wait, poll_seconds, injections, tracking).run()


def write_outputs(spec: ExperimentSpec) -> Tuple[List[str], int]:
    """
    Writes runs.csv, results.md (with the paired differences and the recipe sweep, if any),
    scores.png and paired.csv from the grid's table of finished runs (first adding the rows of
    runs finished without one, `adopt_finished_runs`: a grid made before tables gets its
    table), and spec.json, the spec they were reported with; returns their paths and how many
    runs they report. Each file is replaced atomically, so shards that finish at the same time
    never leave a half-written one.
    """
    if os.path.isdir(spec.output_dir):
        adopt_finished_runs(spec.output_dir)
    rows = collect_results(spec)
    if not rows:
        logger.warning("No finished runs in %s yet: nothing to report.", spec.output_dir)
        return [], 0
    names = ("runs.csv", "results.md", "scores.png", "paired.csv")
    paths = [os.path.join(spec.output_dir, name) for name in names]
    # Injection variants against the base without injection, strategies against the
    # cross-encoder, a variant injected with another seed against its first seed, the
    # simplified and ablated injections against the full objective `tft`, a custom
    # variant against the variant it customises, and every base's variants against the
    # reference base without injection: each at equal other coordinates, paired by
    # fine-tuning seed. (factor, reference, title, reference base)
    comparisons: List[Tuple[str, Reference, Optional[str], Optional[str]]] = [
        ("variant", "none", None, None),
        ("strategy", CROSS, None, None),
        ("variant", other_injection_seed, "another injection seed - the first", None),
        ("variant", full_injection, "injection variant - the full objective `tft`", None),
        (
            "variant",
            customised_variant(spec.custom_variants),
            "custom variant - the variant it customises",
            None,
        ),
    ]
    if spec.reference_base is not None:
        against = f"each base's variants - {spec.reference_base} `none`"
        comparisons.append(("variant", "none", against, spec.reference_base))
    tasks = spec.task_table()
    with tempfile.TemporaryDirectory(dir=spec.output_dir) as scratch:
        drafts = [os.path.join(scratch, os.path.basename(path)) for path in paths]
        write_csv(rows, drafts[0], tasks)
        with open(drafts[1], "w") as handle:
            handle.write(markdown_table(rows, tasks, _tuning(spec), spec.sweep_variants))
            for factor, reference, title, base in comparisons:
                table = paired_table(
                    rows, factor, reference, title=title, reference_base=base, tasks=tasks
                )
                if table:
                    handle.write("\n" + table)
            sweep_rows = collect_results(spec, list(spec.sweep_runs()))
            if sweep_rows:
                selection = {task: spec.selection_metric(task) for task in spec.tasks}
                held_out = spec.sweep_held_out_fraction
                handle.write("\n" + sweep_table(sweep_rows, selection, tasks, held_out))
        plot(rows, drafts[2], tasks)
        comparing = [(f, r, base) for f, r, _, base in comparisons]
        write_paired_csv(rows, comparing, drafts[3], tasks)
        for draft, path in zip(drafts, paths):
            os.replace(draft, path)
    write_spec(spec)
    return paths, len({row["directory"] for row in rows})


def write_spec(spec: ExperimentSpec) -> None:
    """Writes `spec.json`, the spec the grid runs with, into its output directory."""
    os.makedirs(spec.output_dir, exist_ok=True)
    with atomic_output(os.path.join(spec.output_dir, SPEC_FILE)) as stream:
        stream.write(spec.dumps())
