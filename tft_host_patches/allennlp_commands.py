"""
`allennlp predict` and `allennlp evaluate` with the checks of
`tft_allennlp.predictors.allennlp_commands`: replaces `allennlp.commands.predict._PredictManager`
(`CheckedPredictManager`) and `_get_predictor` (the output is not an input), and
`allennlp.commands.evaluate.evaluate_from_archive` (outputs checked; the command prints a table).
Remove when AllenNLP checks its outputs (`tests/predictors/allennlp_commands_test.py`,
`tests/console_errors_test.py`).
"""

import argparse
import logging
from typing import Any, Callable

from allennlp.commands import evaluate as evaluate_command
from allennlp.commands import predict as predict_command

from tft_host_patches import replace

PATCH = "allennlp_commands"
# Where `dump_metrics` logs the metrics: AllenNLP's, and the plugin's atomic one.
_METRICS_LOGGERS = ("allennlp.common.util", "tft_host_patches.run_files")


def install() -> None:
    """Puts the checked `predict` and `evaluate` in place of AllenNLP's (once)."""
    from tft_allennlp.common.console import in_allennlp_command, verbose
    from tft_allennlp.predictors.allennlp_commands import (
        CheckedPredictManager,
        WithoutMetricsJson,
        check_evaluation_files,
        check_not_an_input,
        metrics_table,
    )

    replace(predict_command, "_PredictManager", CheckedPredictManager, patch=PATCH)
    get_predictor: Callable[[argparse.Namespace], Any] = predict_command._get_predictor

    def _checked_get_predictor(args: argparse.Namespace) -> Any:
        # `allennlp predict` calls it first, before it loads the archive.
        inputs = [args.input_file, args.archive_file, args.weights_file]
        check_not_an_input(args.output_file, inputs)
        return get_predictor(args)

    replace(predict_command, "_get_predictor", _checked_get_predictor, patch=PATCH)
    evaluate: Callable[..., Any] = evaluate_command.evaluate_from_archive

    def _checked_evaluate_from_archive(*args: Any, **kwargs: Any) -> Any:
        check_evaluation_files(evaluate, *args, **kwargs)
        if not in_allennlp_command():
            return evaluate(*args, **kwargs)
        # The `allennlp evaluate` command: the table, instead of the metrics as JSON.
        quiet = WithoutMetricsJson()
        loggers = [logging.getLogger(name) for name in _METRICS_LOGGERS]
        for metrics_logger in loggers if not verbose() else []:
            metrics_logger.addFilter(quiet)
        try:
            metrics = evaluate(*args, **kwargs)
        finally:
            for metrics_logger in loggers:
                metrics_logger.removeFilter(quiet)
        print(metrics_table(metrics))
        return metrics

    replace(evaluate_command, "evaluate_from_archive", _checked_evaluate_from_archive, patch=PATCH)
