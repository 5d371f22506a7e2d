"""
`allennlp tft-configs`: where the configs shipped with the package are, to read, copy or build
on (the plugin puts their folder on jsonnet's import path, docs/tasks.md).
"""

import argparse
import os
import sys
from typing import TextIO

from allennlp.commands.subcommand import Subcommand

from tft_allennlp.common.config_defaults import CONFIGS_ROOT


@Subcommand.register("tft-configs")
class Configs(Subcommand):
    requires_plugins = False

    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Print the folder of the configs shipped with tft-allennlp (glue/, injection/, "
            "common/task.libsonnet, ...); with --list, every config in it."
        )
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("--list", action="store_true", help="list every config")
        subparser.set_defaults(func=lambda args: print_configs(args.list))
        return subparser


def print_configs(listing: bool = False, out: TextIO = sys.stdout) -> None:
    """The configs' folder, then (with `listing`) each config's path relative to it."""
    print(CONFIGS_ROOT, file=out)
    if listing:
        for root, _, names in sorted(os.walk(CONFIGS_ROOT)):
            for name in sorted(names):
                if name.endswith((".jsonnet", ".libsonnet")):
                    print(os.path.relpath(os.path.join(root, name), CONFIGS_ROOT), file=out)
