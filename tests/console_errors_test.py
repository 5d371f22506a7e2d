"""
What a user reads when a command stops on a mistake, and its results on the screen (issue 61):

- For each command family, real mistakes, each run as the `allennlp` program (in a forked child
  with its terminal and excepthook: `tests.fault_cases.run_allennlp`), end with exactly one line
  on stderr that names the thing (and the variable a path came from), exit non-zero, and keep
  the traceback in the log that the line names: a training's `out.log`, else a temporary log.
  Lines are counted as a terminal shows them, less blank lines and progress bars (tqdm's
  `... [00:00, ?it/s]`), which a bar open when the error came would leave.
- `evaluate` prints its metrics table; `predict` one compact line per prediction on a terminal
  (a pseudo-terminal here) and the full JSON through a pipe.
"""

import json
import pathlib
import re
import shutil
from typing import List, Sequence, Tuple

import pytest

from tests import CONFIGS_ROOT, FIXTURES_ROOT, PROJECT_ROOT
from tests.allennlp_cli import on_a_terminal
from tests.fault_cases import Outcome, forget_temporary_log, run_allennlp
from tft_allennlp.common import console, optional_packages
from tft_allennlp.predictors.allennlp_commands import compact_prediction, metrics_table

PROGRESS_BAR = re.compile(r"\[\d+:\d\d(:\d\d)?[<,]")
TRACEBACK = "Traceback (most recent call last)"
PAIR = {"sentence1": "A man plays the flute.", "sentence2": "A man is playing a flute."}


@pytest.fixture(scope="module")
def glue_run(tmp_path_factory) -> pathlib.Path:
    """One MRPC run (one epoch on the fixtures) whose archive every case reads."""
    directory = tmp_path_factory.mktemp("archive") / "glue"
    argv = ["train", str(CONFIGS_ROOT / "glue/mrpc.jsonnet"), "-s", str(directory)]
    outcome = run_allennlp(argv + ["-o", '{"trainer.num_epochs": 1}'], directory.parent)
    assert outcome.returncode == 0, outcome.stderr[-3000:]
    return directory


def printed_lines(stderr: str) -> List[str]:
    """What a terminal shows of `stderr`, less blank lines and progress bars."""
    lines = stderr.replace("\r", "\n").split("\n")
    return [line for line in lines if line.strip() and not PROGRESS_BAR.search(line)]


def stops_with_one_line(outcome: Outcome, names: Sequence[str], log: str = "") -> str:
    """
    Checks that `outcome` failed with one line on stderr naming each of `names` and the log
    that keeps the traceback (`log` in its path, if given); the line.
    """
    assert outcome.returncode not in (0, None), outcome.stderr[-3000:]
    lines = printed_lines(outcome.stderr)
    assert len(lines) == 1, outcome.stderr[-3000:]
    (line,) = lines
    assert TRACEBACK not in outcome.stderr + outcome.stdout
    for name in names:
        assert name in line, line
    where = re.search(r" \(traceback: (\S+)\)$", line)
    assert where, line
    path = PROJECT_ROOT / where.group(1)  # relative to the child's folder, the project root
    assert log in str(path), line
    assert TRACEBACK in path.read_text()
    if log != "out.log":
        path.unlink()  # a temporary log
    return line


def _paraphrase_task(directory: pathlib.Path) -> str:
    """README's own task, its training file with a label outside the task's set on line 6."""
    rows = ["id\tfirst\tsecond\tverdict", "1\tA man plays.\tA man is playing.\tsame"]
    rows += ["2\tIt rains.\tThe cat sat.\tdifferent"] * 3 + ["5\tIt is cold.\tIt is warm.\tmaybe"]
    (directory / "bad_train.tsv").write_text("\n".join(rows) + "\n")
    (directory / "dev.tsv").write_text("\n".join(rows[:5]) + "\n")
    config = f"""
    local sentence_task = import 'training_configs/common/task.libsonnet';
    sentence_task(
      task={{name: 'paraphrase', sentence1: 'first', sentence2: 'second', label: 'verdict',
             labels: ['same', 'different']}},
      train_data_path='{directory}/bad_train.tsv', validation_data_path='{directory}/dev.tsv')
    """
    (directory / "paraphrase.jsonnet").write_text(config)
    return str(directory / "paraphrase.jsonnet")


def _train(config: str, directory: pathlib.Path, *flags: str) -> List[str]:
    return ["train", config, "-s", str(directory / "run"), *flags]


MRPC = str(CONFIGS_ROOT / "glue/mrpc.jsonnet")
ONE_EPOCH = ["-o", '{"trainer.num_epochs": 1}']


def test_train_mistakes_end_with_one_line(tmp_path, glue_run):
    outcome = run_allennlp(_train(_paraphrase_task(tmp_path), tmp_path), tmp_path)
    stops_with_one_line(outcome, ["bad_train.tsv:6: unknown label: 'maybe'"], "out.log")
    typo = _train(MRPC, tmp_path / "typo", "-o", '{"trainer.num_epoch": 2}')
    stops_with_one_line(run_allennlp(typo, tmp_path), ["did you mean 'trainer.num_epochs'"])
    shutil.copytree(glue_run, tmp_path / "trained/run")
    outcome = run_allennlp(_train(MRPC, tmp_path / "trained"), tmp_path)
    stops_with_one_line(outcome, ["already holds a run", "--recover", "--force"])
    # A wrong GLUE_DIR: the line names the variable, not only the file.
    wrong = {"GLUE_DIR": str(tmp_path / "no_glue")}
    outcome = run_allennlp(_train(MRPC, tmp_path / "glue", *ONE_EPOCH), tmp_path, wrong)
    line = stops_with_one_line(outcome, ["no_glue/MRPC/train.tsv", "GLUE_DIR="], "out.log")
    assert "set GLUE_DIR to" in line
    # With TFT_VERBOSE=1 the traceback is on the terminal too, above the line.
    verbose = {"TFT_VERBOSE": "1"}
    outcome = run_allennlp(_train(MRPC, tmp_path / "verbose", *typo[-2:]), tmp_path, verbose)
    assert outcome.returncode == 1 and TRACEBACK in outcome.stderr
    assert outcome.last_line.startswith("error: the training config")
    forget_temporary_log(outcome)


def test_a_tracker_whose_package_is_missing_ends_with_one_line_naming_the_extra(
    tmp_path, monkeypatch
):
    # AllenNLP's W&B callback, its package missing (a name no environment has, whether or not
    # wandb is installed here: the forked command sees this table): one line, before any data
    # is read or model built.
    missing = ("tft_no_such_tracker", "tracking")
    monkeypatch.setitem(optional_packages.CALLBACK_PACKAGES, "wandb", missing)
    callbacks = '{"trainer.callbacks": [{"type": "tft_parameter_counts"}, {"type": "wandb"}]}'
    outcome = run_allennlp(_train(MRPC, tmp_path, "-o", callbacks), tmp_path)
    line = stops_with_one_line(outcome, ["the training config: trainer.callbacks.1", "'wandb'"])
    assert (
        "needs the tft_no_such_tracker package; it is not installed: "
        "pip install 'tft-allennlp[tracking]' (traceback: "
    ) in line
    assert not (tmp_path / "run/vocabulary").exists()


def test_evaluate_mistakes_end_with_one_line(tmp_path, glue_run):
    archive = str(glue_run / "model.tar.gz")
    unlabelled = str(FIXTURES_ROOT / "glue/MRPC/test.tsv")
    stops_with_one_line(run_allennlp(["evaluate", archive, unlabelled], tmp_path), ["test.tsv"])
    missing = ["evaluate", archive, str(tmp_path / "no.tsv")]
    stops_with_one_line(run_allennlp(missing, tmp_path), ["no.tsv"])


def test_predict_mistakes_end_with_one_line(tmp_path, glue_run):
    archive = str(glue_run / "model.tar.gz")
    (tmp_path / "in.jsonl").write_text(json.dumps({"sentence1": "A man plays."}) + "\n")
    outcome = run_allennlp(["predict", archive, str(tmp_path / "in.jsonl")], tmp_path)
    stops_with_one_line(outcome, ["in.jsonl:1", "'sentence2' is missing"])
    outcome = run_allennlp(["predict", str(tmp_path / "no.tar.gz"), str(tmp_path)], tmp_path)
    stops_with_one_line(outcome, ["no.tar.gz"])


def test_export_mistakes_end_with_one_line(tmp_path, tiny_bert):
    outcome = run_allennlp(["tft-export", str(tmp_path / "no.tar.gz"), str(tmp_path)], tmp_path)
    stops_with_one_line(outcome, ["tft-export: ", "no.tar.gz"])
    # An archive of the wrong kind: a Hugging Face model folder.
    outcome = run_allennlp(["tft-export", tiny_bert, str(tmp_path / "out")], tmp_path)
    stops_with_one_line(outcome, ["a Hugging Face model folder"])


def test_align_mistakes_end_with_one_line(tmp_path):
    outcome = run_allennlp(["tft-align", str(tmp_path / "no.tsv"), "o.jsonl"], tmp_path)
    stops_with_one_line(outcome, ["tft-align: ", "no.tsv"])
    (tmp_path / "pairs.tsv").write_text("A man plays.\tA man is playing.\n")
    (tmp_path / "out.jsonl").write_text("mine\n")
    argv = ["tft-align", str(tmp_path / "pairs.tsv"), str(tmp_path / "out.jsonl")]
    stops_with_one_line(run_allennlp(argv, tmp_path), ["out.jsonl", "--force"])


def test_glue_submission_mistakes_end_with_one_line(tmp_path, glue_run, tiny_bert):
    archive = str(glue_run / "model.tar.gz")
    command = ["tft-glue-submission", str(tmp_path / "out"), archive]
    outcome = run_allennlp(command + ["--glue-dir", str(tmp_path / "no_glue")], tmp_path)
    stops_with_one_line(outcome, ["tft-glue-submission: ", "no_glue"])
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine/notes.txt").write_text("keep me")
    glue = ["--glue-dir", str(FIXTURES_ROOT / "glue")]
    argv = ["tft-glue-submission", str(tmp_path / "mine"), archive, *glue]
    stops_with_one_line(run_allennlp(argv, tmp_path), ["mine", "--force"])
    # An archive of the wrong kind.
    argv = ["tft-glue-submission", str(tmp_path / "out"), tiny_bert, *glue]
    stops_with_one_line(run_allennlp(argv, tmp_path), ["a Hugging Face model folder"])


def test_a_bug_keeps_its_traceback_and_paths_name_their_variable(monkeypatch, tmp_path):
    assert console.user_error(KeyError("model")) is None
    assert console.user_error(OSError(28, "No space left on device")) is None
    full = OSError(28, "No space left on device", "run/best.th")
    assert console.user_error(full) == "run/best.th: No space left on device"
    missing = FileNotFoundError(f"file {tmp_path}/glue/MRPC/dev.tsv not found")
    monkeypatch.setenv("GLUE_DIR", str(tmp_path / "glue"))
    assert console.user_error(missing) == (
        f"{tmp_path}/glue/MRPC/dev.tsv: No such file or directory (from GLUE_DIR="
        f"{tmp_path}/glue; {console.PATH_VARIABLES['GLUE_DIR']})"
    )
    # Unset, the variable's default is what the config read.
    monkeypatch.delenv("GLUE_DIR")
    line = console.user_error(FileNotFoundError(2, "No such file", "glue_data/RTE/dev.tsv"))
    assert "(GLUE_DIR is not set: 'glue_data'; set GLUE_DIR to" in line
    # A message that names the variable already, or a path from elsewhere, is left as it is.
    assert console.with_variables("TFT_CACHE=/x is not a folder") == "TFT_CACHE=/x is not a folder"
    assert console.with_variables("/elsewhere/dev.tsv: bad") == "/elsewhere/dev.tsv: bad"
    # So is a refusal of what the path holds, which says what to do itself.
    monkeypatch.setenv("TFT_MODEL", f"{tmp_path}/model")
    refusal = f"{tmp_path}/model: refused: its config.json maps ['AutoModel'] to ... code"
    assert console.with_variables(refusal) == refusal
    assert console.with_variables(f"{tmp_path}/model: bad").endswith(
        f"(from TFT_MODEL={tmp_path}/model; {console.PATH_VARIABLES['TFT_MODEL']})"
    )


def test_an_empty_variable_is_named_where_a_path_lost_its_folder(monkeypatch):
    monkeypatch.setenv("GLUE_DIR", "")
    line = console.user_error(FileNotFoundError(2, "No such file", "/MRPC/train.tsv"))
    assert line == (
        "/MRPC/train.tsv: No such file (GLUE_DIR is set, and empty; "
        f"{console.PATH_VARIABLES['GLUE_DIR']})"
    )
    # A relative path, or one with its folder, did not come from the empty variable.
    assert console.with_variables("data/dev.tsv: bad") == "data/dev.tsv: bad"


def test_a_command_stopped_by_a_signal_says_so_in_one_line():
    from allennlp.common.util import SigTermReceived

    assert console.user_error(KeyboardInterrupt()) == "stopped by Ctrl-C (SIGINT)"
    stopped = SigTermReceived()
    stopped.add_note("m.tar.gz: stopped while extracting it; nothing of it was kept")
    assert console.user_error(stopped) == (
        "stopped by SIGTERM: m.tar.gz: stopped while extracting it; nothing of it was kept"
    )


# Results on the screen


def _on_a_terminal(argv: List[str]) -> Tuple[int, str, str]:
    """`allennlp ARGV` (forked, as the program) with a pseudo-terminal as its stdout."""
    code, shown, errors = on_a_terminal(argv, separate_stderr=True)
    return code, shown.replace("\r\n", "\n"), errors


def test_evaluate_prints_its_metrics_table(tmp_path, glue_run):
    dev = str(FIXTURES_ROOT / "glue/MRPC/dev.tsv")
    archive = str(glue_run / "model.tar.gz")
    for output in ([], ["--output-file", str(tmp_path / "metrics.json")]):
        outcome = run_allennlp(["evaluate", archive, dev, *output], tmp_path)
        assert outcome.returncode == 0, outcome.stderr[-3000:]
        table = [line for line in outcome.stdout.splitlines() if re.search(r"\d\.\d{4}$", line)]
        names = [line.split()[0] for line in table]
        assert names == ["accuracy", "f1", "combined_score", "loss"], outcome.stdout
        assert len({len(line) for line in table}) == 1  # aligned
        assert "Metrics:" not in outcome.stdout + outcome.stderr  # not the JSON as well
    assert set(json.loads((tmp_path / "metrics.json").read_text())) == set(names)


def test_predict_prints_a_line_per_prediction_on_a_terminal_and_json_through_a_pipe(
    tmp_path, glue_run
):
    (tmp_path / "in.jsonl").write_text(f"{json.dumps(PAIR)}\n{json.dumps(PAIR)}\n")
    argv = ["predict", str(glue_run / "model.tar.gz"), str(tmp_path / "in.jsonl")]
    code, shown, errors = _on_a_terminal(argv + ["--output-file", str(tmp_path / "out.jsonl")])
    assert code == 0, errors[-3000:]
    lines = [line for line in shown.splitlines() if line.strip()]
    assert len(lines) == 2 and all(
        re.fullmatch(r"[12]: label [01], probability 0\.\d{4}", line) for line in lines
    ), shown
    written = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(written) == 2 and set(written[0]) >= {"sentence1", "label", "probs"}
    piped = run_allennlp(argv, tmp_path)
    assert piped.returncode == 0, piped.stderr[-3000:]
    assert [json.loads(line) for line in piped.stdout.splitlines()] == written


def test_compact_lines_and_tables():
    assert compact_prediction({"label": "1", "probs": [0.25, 0.75]}) == (
        "label 1, probability 0.7500"
    )
    assert compact_prediction({"score": 3.25}) == "score 3.2500"
    phrase_pairs = {
        "paraphrase_probability": 0.8731,
        "phrase_pairs": [
            {"source": "A man", "target": "A man", "label": "paraphrase"},
            {"source": "sleeps", "target": "is asleep", "label": None, "left_out": "..."},
        ],
    }
    assert compact_prediction(phrase_pairs) == (
        "paraphrase probability 0.8731; phrases: A man = A man paraphrase, "
        "sleeps = is asleep (left out)"
    )
    assert compact_prediction({"tags": ["O"]}) is None
    assert metrics_table({"accuracy": 0.5, "f1": 0.66667, "combined_score": 0.583335}) == (
        "accuracy        0.5000\nf1              0.6667\ncombined_score  0.5833"
    )
