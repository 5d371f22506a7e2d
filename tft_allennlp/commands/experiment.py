"""
`allennlp tft-experiment SPEC`: runs a grid of injections and GLUE fine-tunings resumably and
writes `runs.csv`, `results.md` and `scores.png` to the spec's output directory.
"""
import argparse
import collections
import logging
import os
import sys

from allennlp.commands.subcommand import Subcommand

from tft_allennlp.experiments import ExperimentRunner, ExperimentSpec, collect_results
from tft_allennlp.experiments.report import markdown_table, plot, sweep_table, write_csv
from tft_allennlp.experiments.spec import selection_metric

logger = logging.getLogger(__name__)


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
        subparser.set_defaults(func=_experiment_from_args)
        return subparser


def _experiment_from_args(args: argparse.Namespace) -> None:
    spec = ExperimentSpec.from_file(args.spec, args.output_dir)
    statuses = {} if args.report_only else run_experiment(spec)
    counts = collections.Counter(statuses.values())
    paths = write_outputs(spec)
    print(f"runs: {dict(counts)}; wrote {', '.join(paths)}")
    if counts["failed"]:
        sys.exit(1)


def run_experiment(spec: ExperimentSpec):
    os.makedirs(spec.output_dir, exist_ok=True)
    with open(os.path.join(spec.output_dir, "spec.json"), "w") as handle:
        handle.write(spec.dumps())
    return ExperimentRunner(spec).run()


def write_outputs(spec: ExperimentSpec):
    """
    Writes runs.csv, results.md (with the recipe sweep, if any) and scores.png from the finished
    runs; returns their paths.
    """
    rows = collect_results(spec)
    if not rows:
        logger.warning("No finished runs in %s yet.", spec.output_dir)
        return []
    paths = [os.path.join(spec.output_dir, name) for name in ("runs.csv", "results.md", "scores.png")]
    write_csv(rows, paths[0])
    with open(paths[1], "w") as handle:
        handle.write(markdown_table(rows))
        sweep_rows = collect_results(spec, list(spec.sweep_runs()))
        if sweep_rows:
            handle.write("\n" + sweep_table(sweep_rows, {task: selection_metric(task) for task in spec.tasks}))
    plot(rows, paths[2])
    return paths
