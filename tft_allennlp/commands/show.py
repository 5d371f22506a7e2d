"""
`allennlp tft-show ALIGNED.jsonl OUT.html`: one self-contained HTML page of aligned sentence
pairs (`allennlp tft-align`'s output), each phrase alignment drawn as a link between its two
spans; with `--archive`, an injection model's sentence and phrase probabilities, and with
`--gold`, the gold's verdicts. This module is the command line over `tft_allennlp.viewer`,
which makes the page (docs/viewer.md).
"""

import argparse
import sys

from allennlp.commands.subcommand import Subcommand
from allennlp.common.checks import ConfigurationError

from tft_allennlp.commands.arguments import positive_int
from tft_allennlp.common.console import stopped
from tft_allennlp.common.input_problems import MalformedInputError
from tft_allennlp.common.output_paths import add_force_argument
from tft_allennlp.viewer.page_writer import write_page

MAX_PAIRS = 1000
"""The most pairs a page shows: headless Chromium on 2 CPU cores took 9 s to draw a page of 250
pairs, 19 s for 500, about a minute for 1,000 (6.5 MB), 3 minutes for 2,000 and did not finish
3,000 in 150 s (benchmarks/RESULTS.md); a larger sample is several pages, one seed each."""


@Subcommand.register("tft-show")
class Show(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Write one self-contained HTML page that shows aligned sentence pairs (the output "
            "of tft-align): each phrase alignment as a link between its spans, with an "
            "injection model's probabilities (--archive) and gold verdicts (--gold)."
        )
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("aligned", help="aligned corpus (JSON lines, tft-align's output)")
        subparser.add_argument("output", help="the HTML page to write")
        subparser.add_argument(
            "--archive", help="an injection model.tar.gz: score every pair and phrase pair"
        )
        subparser.add_argument(
            "--gold",
            help="gold alignments of the same pairs: MultiMWA's TSV, word-link JSON lines with "
            "words, or aligned-corpus JSON lines",
        )
        subparser.add_argument(
            "--limit",
            type=positive_int,
            default=100,
            help=f"pairs to show (default 100, at most {MAX_PAIRS}: a browser's limit)",
        )
        choice = subparser.add_mutually_exclusive_group()
        choice.add_argument(
            "--seed",
            type=int,
            default=0,
            help="draw the pairs at random with this seed (default 0), shown in file order",
        )
        choice.add_argument("--first", action="store_true", help="show the first pairs")
        subparser.add_argument(
            "--batch-size", type=positive_int, default=32, help="pairs per forward pass"
        )
        add_force_argument(subparser, "OUTPUT")
        subparser.set_defaults(func=_show_from_args)
        return subparser


def _show_from_args(args: argparse.Namespace) -> None:
    try:
        if args.limit > MAX_PAIRS:
            raise ConfigurationError(
                f"--limit {args.limit}: a page of more than {MAX_PAIRS} pairs takes a browser "
                f"minutes to open, or never opens; show at most {MAX_PAIRS} (a page per --seed "
                "for a larger sample)"
            )
        summary = write_page(
            args.aligned,
            args.output,
            archive=args.archive,
            gold=args.gold,
            limit=args.limit,
            seed=None if args.first else args.seed,
            force=args.force,
            batch_size=args.batch_size,
        )
    except (ConfigurationError, MalformedInputError, OSError) as error:
        sys.exit(stopped("tft-show", error))
    summary["page"] = args.output
    width = max(len(key) for key in summary)
    for key, value in summary.items():
        print(f"{key:>{width}}: {value}")
