"""
AllenNLP's own `predict` and `evaluate` commands, with the plugin loaded:

- Neither writes over a file it reads. An output file (`predict --output-file`, `evaluate
  --output-file` and `--predictions-output-file`, also as `--auto-names` makes them) that is
  the input file, the archive or the weights file, in any spelling or through a symbolic or
  hard link, is refused with one line naming both, before the archive is loaded and before
  anything is opened for writing; so are two of `evaluate`'s outputs that are one file (the
  metrics would replace the predictions). (AllenNLP opens an output before it reads the input, which
  leaves the input empty, `predict` exiting 0 with nothing predicted; `evaluate` writes its
  metrics over the input at the end.) It is the policy of the plugin's own commands
  (`common/output_paths.py`) without their `--force`: an output that is no input is replaced,
  as AllenNLP always did.
- `predict` names a bad input line by its file and line number, as the readers do
  (`pairs.jsonl:5: 'sentence2' must be non-empty text, not ""`, `<stdin>:5: ...`), counting
  the blank lines it skips; a line that is not UTF-8 is such an error too, not a
  `UnicodeDecodeError` (`predictor_input.input_lines`).
- Results on the screen: `predict` prints one compact line per prediction on a terminal
  (`compact_prediction`: the label and its probability, or the score; a phrase-pair
  prediction's paraphrase probability and its phrase pairs' labels), and the full JSON line
  of each through a pipe (`--output-file` always gets the JSON), where AllenNLP prints
  `input 0: ...` and `prediction: ...` for each; `evaluate` prints its metrics table
  (`metrics_table`) with or without `--output-file`, where AllenNLP prints the metrics only
  with one, as JSON (which then stays off the terminal, unless `TFT_VERBOSE=1`).

`install` (called by `tft_allennlp/__init__.py`) puts them in place of AllenNLP's
`_PredictManager`, `_get_predictor` and `evaluate_from_archive`: the names its commands look up
when they run. (AllenNLP imports a plugin after parsing the command line, when the command's own
function, `_predict`, is already chosen.)
"""

import contextlib
import inspect
import json
import logging
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

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

    def _maybe_print_to_console_and_file(
        self, index: int, prediction: str, model_input: Optional[str] = None
    ) -> None:
        # `prediction` is the predictor's `dump_line`: a JSON line for every stock predictor.
        if self._print_to_console:
            line = None
            if sys.stdout.isatty():
                try:
                    line = compact_prediction(json.loads(prediction))
                except ValueError:
                    pass
            if line is None:
                sys.stdout.write(prediction if prediction.endswith("\n") else prediction + "\n")
            else:
                print(f"{index + 1}: {line}")
        if self._output_file is not None:
            self._output_file.write(prediction)

    def run(self) -> None:
        """AllenNLP's `run`, where an error writing the output file (a full disk: `OSError`
        without a path, at a write or at the closing flush) names the file."""
        try:
            super().run()
        except OSError as error:
            output = getattr(self._output_file, "name", None)
            if error.filename is not None or output is None:
                raise
            raise OSError(error.errno, error.strerror, output) from error
        finally:
            if self._output_file is not None and not self._output_file.closed:
                with contextlib.suppress(OSError):  # the error above is the one to report
                    self._output_file.close()

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


def compact_prediction(result: Any) -> Optional[str]:
    """
    A prediction in one line for the terminal: `label 1, probability 0.8731` (a classifier),
    `score 3.2500` (a regression), or a phrase-pair prediction's paraphrase probability and its
    phrase pairs' labels (`paraphrase probability 0.8731; phrases: A man = A man paraphrase,
    ...`); None for a prediction of any other kind.
    """
    if not isinstance(result, dict):
        return None
    if "paraphrase_probability" in result or "phrase_pairs" in result:
        parts = []
        if result.get("paraphrase_probability") is not None:
            parts.append(f"paraphrase probability {result['paraphrase_probability']:.4f}")
        pairs = [
            f"{pair['source']} = {pair['target']} "
            + (pair["label"] if pair.get("label") is not None else "(left out)")
            for pair in result.get("phrase_pairs") or []
        ]
        if pairs:
            parts.append("phrases: " + ", ".join(pairs))
        return "; ".join(parts) or None
    if "label" in result and isinstance(result.get("probs"), list) and result["probs"]:
        return f"label {result['label']}, probability {max(result['probs']):.4f}"
    score = result.get("score")
    if isinstance(score, list) and len(score) == 1:
        score = score[0]
    if isinstance(score, (int, float)):
        return f"score {score:.4f}"
    return None


def metrics_table(metrics: Dict[str, Any]) -> str:
    """`metrics` one per line, names left and values right aligned, numbers with 4 decimals."""
    shown = {
        name: f"{value:.4f}" if isinstance(value, float) else str(value)
        for name, value in metrics.items()
    }
    names = max((len(name) for name in shown), default=0)
    values = max((len(value) for value in shown.values()), default=0)
    return "\n".join(f"{name:<{names}}  {value:>{values}}" for name, value in shown.items())


class WithoutMetricsJson(logging.Filter):
    """Drops the `Metrics: {...}` record that AllenNLP's evaluator logs with an output file."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Metrics:")


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
    one of the files it reads (a data file, the archive or the weights file), or two of its
    outputs to one file.
    """
    given = inspect.signature(evaluate).bind(*args, **kwargs)
    given.apply_defaults()
    arguments = given.arguments
    data, auto = arguments["input_file"], arguments["auto_names"]
    data_files, metrics = evaluation_files(data, arguments["metrics_output_file"], None, auto)
    _, predictions = evaluation_files(data, None, arguments["predictions_output_file"], auto)
    outputs = [("--output-file", path) for path in metrics]
    outputs += [("--predictions-output-file", path) for path in predictions]
    inputs = [*data_files, str(arguments["archive_file"]), arguments["weights_file"]]
    for _, output in outputs:
        check_not_an_input(output, inputs)
    check_distinct_outputs(outputs)


def check_distinct_outputs(outputs: List[Tuple[str, str]]) -> None:
    """
    A `ConfigurationError` naming both if two of the output files `outputs` ((option, path)
    pairs) are one file, in any spelling or through a symbolic or hard link: the last written
    would replace the other (`evaluate --output-file m.json --predictions-output-file m.json`
    kept the metrics alone).
    """
    for index, (flag, output) in enumerate(outputs):
        for earlier_flag, earlier in outputs[:index]:
            if same_path(earlier, output):
                raise ConfigurationError(
                    f"{output}: {flag} is the same file as {earlier_flag} {earlier}; one would "
                    "replace the other: give each output a file of its own"
                )
