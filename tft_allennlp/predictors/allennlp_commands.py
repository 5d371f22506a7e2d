"""
AllenNLP's own `predict` and `evaluate` commands, with the plugin loaded:

- Neither writes over a file it reads. An output file (`predict --output-file`, `evaluate
  --output-file` and `--predictions-output-file`, also as `--auto-names` makes them) that is
  the input file, the archive or the weights file, in any spelling or through a symbolic or
  hard link, is refused with one line naming both, before the archive is loaded and before
  anything is opened for writing. (AllenNLP opens an output before it reads the input, which
  leaves the input empty, `predict` exiting 0 with nothing predicted; `evaluate` writes its
  metrics over the input at the end.) It is the policy of the plugin's own commands
  (`common/output_paths.py`) without their `--force`: an output that is no input is replaced,
  as AllenNLP always did.
- `predict` names a bad input line by its file and line number, as the readers do
  (`pairs.jsonl:5: 'sentence2' must be non-empty text, not ""`, `<stdin>:5: ...`), counting
  the blank lines it skips; a line that is not UTF-8 is such an error too, not a
  `UnicodeDecodeError` (`predictor_input.input_lines`).

`install` (called by `tft_allennlp/__init__.py`) puts them in place of AllenNLP's
`_PredictManager`, `_get_predictor` and `evaluate_from_archive`: the names its commands look up
when they run. (AllenNLP imports a plugin after parsing the command line, when the command's own
function, `_predict`, is already chosen.)
"""

import argparse
import inspect
import json
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, List, Optional, Tuple

from allennlp.commands import evaluate as evaluate_command
from allennlp.commands import predict as predict_command
from allennlp.common.checks import ConfigurationError
from allennlp.common.util import JsonDict

from tft_allennlp.common.input_problems import MalformedInputError
from tft_allennlp.common.output_paths import same_path
from tft_allennlp.predictors.predictor_input import STDIN, input_lines


def check_not_an_input(output: Optional[str], inputs: Iterable[Any]) -> None:
    """
    A `ConfigurationError` naming `output` and the input if the output file `output` is one of
    the files `inputs` (names; `None`, stdin and JSON objects in their place are skipped).
    """
    if output is None:
        return
    for source in inputs:
        if isinstance(source, str) and source != STDIN and same_path(source, str(output)):
            raise ConfigurationError(
                f"{output}: is the input file {source}; writing it would destroy the input"
            )


class CheckedPredictManager(predict_command._PredictManager):
    """
    AllenNLP's `_PredictManager`, which runs `allennlp predict`, refusing an output file that
    is its input file, and reading the input with file and line numbers (`input_lines`). A
    predictor that checks its lines (`LineCheckingPredictor.load_line_at`) names the line in
    its own messages; for any other one, a line that `load_line` refuses (not JSON) is a
    `MalformedInputError` naming it.
    """

    def __init__(
        self, predictor: Any, input_file: str, output_file: Optional[str], *args: Any, **kwargs: Any
    ) -> None:
        check_not_an_input(output_file, [input_file])
        super().__init__(predictor, input_file, output_file, *args, **kwargs)

    def _get_json_data(self) -> Iterator[JsonDict]:
        load_line_at = getattr(self._predictor, "load_line_at", None)
        for where, line in input_lines(self._input_file):
            if load_line_at is not None:
                yield load_line_at(line, where)
                continue
            try:
                yield self._predictor.load_line(line)
            except ValueError as error:  # json.JSONDecodeError, the stock predictors' error
                raise MalformedInputError(f"{where}: {error}") from error


def evaluation_files(
    input_file: str,
    metrics_output_file: Optional[str],
    predictions_output_file: Optional[str],
    auto_names: str = "NONE",
) -> Tuple[List[Any], List[str]]:
    """
    The data files that `allennlp evaluate` reads and the files it writes, named as
    `evaluate_from_archive` names them: comma-separated (or JSON objects, for data), and with
    `auto_names` derived from the data files (`dev.tsv` -> `dev.outputs`, `dev.preds`).
    """
    try:
        data_files = json.loads(f"[{input_file}]")
    except json.JSONDecodeError:
        data_files = input_file.split(",")
    named = [Path(path) for path in data_files if isinstance(path, str)]
    outputs: List[str] = []
    for given, automatic, suffix in (
        (metrics_output_file, ("METRICS", "ALL"), ".outputs"),
        (predictions_output_file, ("PREDS", "ALL"), ".preds"),
    ):
        if given is None:
            continue
        if auto_names in automatic:
            outputs += [str(path.parent / f"{path.stem}{suffix}") for path in named]
        else:
            outputs += given.split(",")
    return data_files, outputs


def check_evaluation_files(evaluate: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """
    Refuses the call `evaluate(*args, **kwargs)` of `evaluate_from_archive` if it would write
    one of the files it reads: a data file, the archive or the weights file.
    """
    given = inspect.signature(evaluate).bind(*args, **kwargs)
    given.apply_defaults()
    data_files, outputs = evaluation_files(
        given.arguments["input_file"],
        given.arguments["metrics_output_file"],
        given.arguments["predictions_output_file"],
        given.arguments["auto_names"],
    )
    inputs = [*data_files, str(given.arguments["archive_file"]), given.arguments["weights_file"]]
    for output in outputs:
        check_not_an_input(output, inputs)


def install() -> None:
    """Puts the checked `predict` and `evaluate` in place of AllenNLP's (once)."""
    predict_command._PredictManager = CheckedPredictManager  # type: ignore[misc]
    get_predictor: Callable[[argparse.Namespace], Any] = predict_command._get_predictor
    if getattr(get_predictor, "__name__", "") != "_checked_get_predictor":

        def _checked_get_predictor(args: argparse.Namespace) -> Any:
            # `allennlp predict` calls it first, before it loads the archive.
            inputs = [args.input_file, args.archive_file, args.weights_file]
            check_not_an_input(args.output_file, inputs)
            return get_predictor(args)

        predict_command._get_predictor = _checked_get_predictor
    evaluate: Callable[..., Any] = evaluate_command.evaluate_from_archive
    if getattr(evaluate, "__name__", "") != "_checked_evaluate_from_archive":

        def _checked_evaluate_from_archive(*args: Any, **kwargs: Any) -> Any:
            check_evaluation_files(evaluate, *args, **kwargs)
            return evaluate(*args, **kwargs)

        evaluate_command.evaluate_from_archive = _checked_evaluate_from_archive
