"""
A fault and bad-input campaign over every command family, as a user meets it: each case sets up
files in a fresh directory, runs one real `allennlp` command line (in a forked child that is
the `allennlp` program, with its terminal and excepthook, and a time limit), and is classified
by what the user gets:

- "clear error": the command fails, and the last line it prints names the thing that is wrong
  (the file, the line, the key), with no traceback on the terminal (the log keeps it);
- "correct": the command does what it should, checked on the files it leaves;
- "traceback": it fails, but prints a traceback, or its last line does not name the thing (a
  raw `OSError`, an unpickling error, a `KeyError`);
- "silent": it exits 0 with a wrong result (a metric of 0.0, an overwritten file, a pair left
  out), or hangs.

Each case says which of the first two is right (`expect`). `tests/fault_campaign_test.py` runs
every case and requires it; `benchmarks/fault_campaign.py` prints the counts per family, also
for an older tree of the project (its library, this harness).

A full disk is stood in for by a file size limit (`RLIMIT_FSIZE`, with `SIGXFSZ` ignored): a
write past it fails with `[Errno 27] File too large` and no path, as a write to a full disk
fails with `[Errno 28]`.
"""

import argparse
import contextlib
import dataclasses
import io
import json
import os
import pathlib
import pickle
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import threading
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from allennlp.commands.subcommand import Subcommand

from tests import CONFIGS_ROOT, FIXTURES_ROOT
from tests.allennlp_cli import _run_allennlp, forked_experiment_runs

TIME_LIMIT = 120.0
INVISIBLE = "\u200b\u200b"  # two zero-width spaces: no visible character, no wordpiece


@dataclasses.dataclass
class Outcome:
    returncode: Optional[int]  # None: still running at the time limit (killed)
    stdout: str
    stderr: str

    @property
    def last_line(self) -> str:
        lines = [line for line in self.stderr.strip().splitlines() if line.strip()]
        return lines[-1] if lines else ""


@dataclasses.dataclass
class Case:
    family: str
    name: str
    # Sets up the case in a directory, with the shared artifacts; returns the command line and
    # its options for `run`, and the check of a correct outcome.
    setup: Callable[[pathlib.Path, "Artifacts"], "Run"]
    expect: str  # "error" or "correct"
    names: Sequence[str] = ()  # what a clear error names (`{dir}` is the case's directory)


@dataclasses.dataclass
class Run:
    argv: List[str]
    check: Optional[Callable[[Outcome], bool]] = None
    environment: Dict[str, str] = dataclasses.field(default_factory=dict)
    file_size_limit: Optional[int] = None
    before: Optional[Callable[[], None]] = None  # e.g. another command first
    # Whether the command left what it must not touch as it was (checked after any outcome).
    harmless: Optional[Callable[[], bool]] = None
    # A text that the command must not print (a file's or a variable's content it must not read).
    secret: Optional[str] = None


@dataclasses.dataclass
class Artifacts:
    """What several cases use: the tiny BERT and two archives trained on the fixtures."""

    bert: str
    glue_run: str  # serialization directory of an MRPC run (model.tar.gz, best.th, ...)
    injection_run: str


def run_allennlp(
    argv: List[str],
    directory: pathlib.Path,
    environment: Optional[Dict[str, str]] = None,
    file_size_limit: Optional[int] = None,
    time_limit: float = TIME_LIMIT,
) -> Outcome:
    """
    `allennlp ARGV` in a forked child, killed after `time_limit` seconds. Its output goes
    through pipes, which a file size limit does not cut short.
    """
    pipes = [os.pipe(), os.pipe()]
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:
        for read, _ in pipes:
            os.close(read)
        if file_size_limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))
        os._exit(_run_allennlp(argv, pipes[0][1], pipes[1][1], environment or {}, as_program=True))
    for _, write in pipes:
        os.close(write)
    texts: List[List[bytes]] = [[], []]
    readers = [
        threading.Thread(target=_drain, args=(read, text)) for (read, _), text in zip(pipes, texts)
    ]
    for reader in readers:
        reader.start()
    deadline = time.monotonic() + time_limit
    returncode = None
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            returncode = os.waitstatus_to_exitcode(status)
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    for reader in readers:
        reader.join()
    stdout, stderr = (b"".join(text).decode(errors="replace") for text in texts)
    return Outcome(returncode, stdout, stderr)


def _drain(handle: int, into: List[bytes]) -> None:
    with os.fdopen(handle, "rb") as stream:
        for block in iter(lambda: stream.read(65536), b""):
            into.append(block)


def classify(case: Case, run: Run, outcome: Outcome, directory: pathlib.Path) -> str:
    """ "clear error", "correct", "traceback" or "silent", as the module docstring says."""
    if outcome.returncode is None:
        return "silent"  # a hang
    if run.harmless is not None and not run.harmless():
        return "silent"  # harm done, whatever the command printed
    if run.secret is not None and run.secret in outcome.stdout + outcome.stderr:
        return "silent"  # it read and showed what it must not read
    names = [name.format(dir=directory) for name in case.names]
    if case.expect == "correct":
        if outcome.returncode == 0:
            return "correct" if run.check is None or run.check(outcome) else "silent"
        return (
            "traceback" if "Traceback (most recent call last)" in outcome.stderr else "clear error"
        )
    if outcome.returncode == 0:
        return "silent"
    if "Traceback (most recent call last)" in outcome.stderr:
        return "traceback"  # even with a last line that names the thing (issue 61)
    return "clear error" if all(name in outcome.last_line for name in names) else "traceback"


def run_case(case: Case, directory: pathlib.Path, artifacts: Artifacts) -> Tuple[str, Outcome]:
    """The case's class ("clear error", ...) and what the command printed."""
    directory.mkdir(parents=True, exist_ok=True)
    run = case.setup(directory, artifacts)
    run.argv = _without_unknown_force(run.argv)
    # The experiment harness's own `allennlp train` runs are forked too.
    with forked_experiment_runs():
        if run.before is not None:
            run.before()
        outcome = run_allennlp(run.argv, directory, run.environment, run.file_size_limit)
    forget_temporary_log(outcome)
    return classify(case, run, outcome, directory), outcome


def forget_temporary_log(outcome: Outcome) -> None:
    """Deletes the temporary log (`/tmp/allennlp-error-*.log`) that an error's line names."""
    named = re.search(r"\(traceback: (\S+allennlp-error-\w+\.log)\)$", outcome.last_line)
    if named and os.path.isabs(named.group(1)):
        with contextlib.suppress(OSError):
            os.remove(named.group(1))


def _without_unknown_force(argv: List[str]) -> List[str]:
    """
    `argv` without `--force` where the command has no such option: a tree of the project from
    before it, whose commands always overwrote (what `--force` asks for).
    """
    if "--force" not in argv or not argv[0].startswith("tft-"):
        return argv
    parser = argparse.ArgumentParser()
    subparser = Subcommand.by_name(argv[0])().add_subparser(parser.add_subparsers())
    if "--force" in subparser._option_string_actions:
        return argv
    return [argument for argument in argv if argument != "--force"]


# Shared set-up


def make_artifacts(directory: pathlib.Path, bert: str) -> Artifacts:
    """Trains the two archives (one epoch each on the fixtures) that the cases read."""
    environment = {"TFT_MODEL": bert, "GLUE_DIR": str(FIXTURES_ROOT / "glue")}
    runs = {}
    for name, config, overrides in (
        ("glue", "glue/mrpc.jsonnet", {}),
        ("injection", "injection/tft.jsonnet", _SPLIT),
    ):
        overrides = json.dumps({**overrides, "trainer.num_epochs": 1})
        argv = ["train", str(CONFIGS_ROOT / config), "-s", str(directory / name), "-o", overrides]
        environment["TFT_PARAPHRASE_CORPUS"] = str(FIXTURES_ROOT / "paraphrase/aligned.jsonl")
        outcome = run_allennlp(argv, directory, environment)
        assert outcome.returncode == 0, outcome.stderr[-3000:]
        runs[name] = str(directory / name)
    return Artifacts(bert, runs["glue"], runs["injection"])


_SPLIT = {
    "dataset_reader.validation_fraction": 0.25,
    "validation_dataset_reader.validation_fraction": 0.25,
}
PAIRS = "sentence1\tsentence2\nA man plays.\tA man is playing.\nIt rains.\tIt is raining.\n"
OLD = "an earlier output\n"


def _fifo(path: pathlib.Path) -> str:
    os.mkfifo(path)
    return str(path)


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


def _mrpc(directory: pathlib.Path, rows: Sequence[str], name: str = "train.tsv") -> str:
    path = directory / name
    header = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
    path.write_text(header + "".join(row + "\n" for row in rows), newline="")
    return str(path)


MRPC_ROWS = [
    f"{label}\t{i}\t{i + 100}\t{a}\t{b}"
    for i, (label, a, b) in enumerate(
        [
            ("1", "A man plays the flute.", "A man is playing a flute."),
            ("0", "The cat sat on the mat.", "Stocks fell sharply today."),
            ("1", "Two dogs run in the park.", "Two dogs are running in the park."),
            ("0", "It rains in Paris.", "The council met on Tuesday."),
        ]
    )
]


def _train(config: str, directory: pathlib.Path, artifacts: Artifacts, **overrides) -> List[str]:
    overrides = {"trainer.num_epochs": 1, **overrides}
    return [
        "train",
        str(CONFIGS_ROOT / config),
        "-s",
        str(directory / "run"),
        "-o",
        json.dumps(overrides),
    ]


def _glue_environment(artifacts: Artifacts, glue_dir: Optional[pathlib.Path] = None) -> Dict:
    return {"TFT_MODEL": artifacts.bert, "GLUE_DIR": str(glue_dir or FIXTURES_ROOT / "glue")}


def _snapshot(directory: pathlib.Path) -> Dict[str, bytes]:
    return {
        str(path.relative_to(directory)): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def _files(directory: pathlib.Path) -> List[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file())


# tft-align


def align_existing_output(force: bool):
    def setup(d, a):
        (d / "pairs.tsv").write_text(PAIRS)
        (d / "out.jsonl").write_text(OLD)
        argv = ["tft-align", str(d / "pairs.tsv"), str(d / "out.jsonl")]
        return Run(
            argv + (["--force"] if force else []),
            check=lambda o: len((d / "out.jsonl").read_text().splitlines()) == 2,
        )

    return setup


def align_input(content: str, **write):
    def setup(d, a):
        (d / "in.tsv").write_text(content, **write)
        return Run(
            ["tft-align", str(d / "in.tsv"), str(d / "out.jsonl")],
            check=lambda o: (d / "out.jsonl").exists(),
        )

    return setup


def align_fifo(d, a):
    return Run(["tft-align", _fifo(d / "pipe.tsv"), str(d / "out.jsonl")])


def align_output_is_input(d, a):
    (d / "pairs.tsv").write_text(PAIRS)
    return Run(["tft-align", str(d / "pairs.tsv"), str(d / "sub/../pairs.tsv"), "--force"])


def align_stale_draft(d, a):
    (d / "pairs.tsv").write_text(PAIRS)
    # The drafts a killed tft-align left: the older name and the current one.
    pid = _dead_pid()
    host = socket.gethostname().split(".")[0]
    (d / f"out.jsonl.{pid}.tmp").write_text("half")
    (d / f"out.jsonl.{host}.{pid}.tmp").write_text("half")
    return Run(
        ["tft-align", str(d / "pairs.tsv"), str(d / "out.jsonl")],
        check=lambda o: _files(d) == ["out.jsonl", "pairs.tsv"],
    )


def align_disk_full(d, a):
    (d / "pairs.tsv").write_text(PAIRS * 20)
    return Run(
        ["tft-align", str(d / "pairs.tsv"), str(d / "out.jsonl")],
        file_size_limit=3000,
    )


ALIGN = [
    Case(
        "tft-align",
        "existing output, no --force",
        align_existing_output(False),
        "error",
        ["out.jsonl", "--force"],
    ),
    Case("tft-align", "existing output, --force", align_existing_output(True), "correct"),
    Case("tft-align", "output is the input", align_output_is_input, "error", ["pairs.tsv"]),
    Case("tft-align", "input is a named pipe", align_fifo, "error", ["pipe.tsv"]),
    Case(
        "tft-align",
        "sentence of zero-width spaces",
        align_input(f"sentence1\tsentence2\nA b.\tC d.\n{INVISIBLE}\tC d.\n"),
        "error",
        ["in.tsv:3"],
    ),
    Case(
        "tft-align",
        "CR line endings",
        align_input("A b.\tC d.\rE f.\tG h.\r", newline=""),
        "error",
        ["in.tsv:1"],
    ),
    Case(
        "tft-align",
        "TSV whose first sentence opens with {",
        align_input("{A} man plays.\tA man is playing.\nIt rains.\tIt is raining.\n"),
        "correct",
    ),
    Case("tft-align", "drafts of a killed run", align_stale_draft, "correct"),
    Case("tft-align", "disk full", align_disk_full, "error", ["out.jsonl"]),
    Case(
        "tft-align",
        "missing input",
        lambda d, a: Run(["tft-align", str(d / "no.tsv"), str(d / "o.jsonl")]),
        "error",
        ["no.tsv"],
    ),
]


# tft-export


def export_into(
    target: Callable[[pathlib.Path, Artifacts], pathlib.Path],
    *flags: str,
    weights: Optional[str] = None,
    limit: Optional[int] = None,
    check=None,
    harmless=None,
):
    def setup(d, a):
        output = target(d, a)
        # With a size limit, the serialization directory: a model.tar.gz would be extracted
        # to a temporary directory first, which the limit would stop.
        source = a.glue_run if limit else os.path.join(a.glue_run, "model.tar.gz")
        argv = ["tft-export", source, str(output), *flags]
        if weights is not None:
            argv += ["--weights-file", os.path.join(a.glue_run, weights)]
        before = _snapshot(output) if output.is_dir() else None
        return Run(
            argv,
            file_size_limit=limit,
            check=(lambda o: check(output, before)) if check else None,
            harmless=harmless(d) if harmless else None,
        )

    return setup


def _users_directory(d, a):
    (d / "mine").mkdir()
    (d / "mine/config.json").write_text('{"my": "model"}')
    (d / "mine/notes.txt").write_text("keep me")
    return d / "mine"


def _empty_directory(d, a):
    (d / "empty").mkdir()
    return d / "empty"


def _base_checkpoint(d, a):
    copy = d / "base"
    shutil.copytree(a.bert, copy)
    return copy


def _killed_export(d, a):
    """What an export killed midway leaves: its staging folder (of a process that is gone)."""
    staging = d / f"out/.tft-staging.{socket.gethostname().split('.')[0]}.{_dead_pid()}"
    staging.mkdir(parents=True)
    (staging / "model.safetensors").write_text("half a file")
    return d / "out"


def _old_marker_beside_a_users_file(d, a):
    """A user's file, and the marker an older version's killed export left (or anyone wrote)."""
    (d / "out").mkdir()
    marker = {"host": socket.gethostname().split(".")[0], "pid": _dead_pid(), "created": True}
    (d / "out/.tft-partial.json").write_text(json.dumps(marker))
    (d / "out/thesis.tex").write_text("my thesis")
    return d / "out"


def _users_file_kept(d):
    thesis = d / "out/thesis.tex"
    return lambda: thesis.is_file() and thesis.read_text() == "my thesis"


def _exported(output, before):
    return (output / "config.json").exists() and (output / "model.safetensors").stat().st_size > 100


def _replaced_and_kept(output, before):
    return _exported(output, before) and (output / "notes.txt").read_text() == "keep me"


def _export_with_base(d, a):
    """An export of a run trained from a copy of the base checkpoint, into that copy."""
    base = _base_checkpoint(d, a)
    directory = d / "run"
    shutil.copytree(a.glue_run, directory)
    config = json.loads((directory / "config.json").read_text())
    text = json.dumps(config).replace(a.bert, str(base))
    (directory / "config.json").write_text(text)
    os.remove(directory / "model.tar.gz")
    return Run(["tft-export", str(directory), str(base), "--force"])


EXPORT = [
    Case(
        "tft-export",
        "non-empty output, no --force",
        export_into(_users_directory),
        "error",
        ["mine", "--force"],
    ),
    Case(
        "tft-export",
        "non-empty output, --force",
        export_into(_users_directory, "--force", check=_replaced_and_kept),
        "correct",
    ),
    Case(
        "tft-export",
        "empty existing output",
        export_into(_empty_directory, check=_exported),
        "correct",
    ),
    Case(
        "tft-export",
        "into the base checkpoint it reads, --force",
        _export_with_base,
        "error",
        ["base"],
    ),
    Case(
        "tft-export",
        "output is the run's directory",
        lambda d, a: Run(["tft-export", a.glue_run, a.glue_run, "--force"]),
        "error",
        ["glue"],
    ),
    Case(
        "tft-export",
        "--weights-file is a config",
        export_into(lambda d, a: d / "out", weights="config.json"),
        "error",
        ["config.json"],
    ),
    Case(
        "tft-export",
        "--weights-file is a training state",
        export_into(lambda d, a: d / "out", weights="training_state_e1_b0.th"),
        "error",
        ["training_state_e1_b0.th"],
    ),
    Case(
        "tft-export",
        "export killed midway, run again",
        export_into(_killed_export, check=_exported),
        "correct",
    ),
    Case(
        "tft-export",
        "a user's file beside an old killed export's marker",
        export_into(_old_marker_beside_a_users_file, harmless=_users_file_kept),
        "error",
        ["out: is not empty"],
    ),
    Case(
        "tft-export",
        "disk full",
        export_into(lambda d, a: d / "out", limit=40_000),
        "error",
        ["out"],
    ),
    Case(
        "tft-export",
        "missing archive",
        lambda d, a: Run(["tft-export", str(d / "no.tar.gz"), str(d / "out")]),
        "error",
        ["no.tar.gz"],
    ),
    Case(
        "tft-export",
        "a Hugging Face model folder given as the archive",
        lambda d, a: Run(["tft-export", a.bert, str(d / "out")]),
        "error",
        ["a Hugging Face model folder"],
    ),
]


# tft-glue-submission


def submission(
    target: Callable[[pathlib.Path, Artifacts], pathlib.Path],
    *flags: str,
    archive: str = "glue",
    limit: Optional[int] = None,
    check=None,
):
    def setup(d, a):
        output = target(d, a)
        run = a.glue_run if archive == "glue" else a.injection_run
        glue = d / "glue"
        if not glue.exists():
            shutil.copytree(FIXTURES_ROOT / "glue", glue)
        # With a size limit, the serialization directory (see `export_into`).
        source = run if limit else os.path.join(run, "model.tar.gz")
        argv = ["tft-glue-submission", str(output), source, "--glue-dir", str(glue), *flags]
        return Run(argv, file_size_limit=limit, check=(lambda o: check(output)) if check else None)

    return setup


def _glue_task_directory(d, a):
    shutil.copytree(FIXTURES_ROOT / "glue", d / "glue")
    return d / "glue/MRPC"


SUBMISSION = [
    Case(
        "tft-glue-submission",
        "non-empty output, no --force",
        submission(_users_directory),
        "error",
        ["mine", "--force"],
    ),
    Case(
        "tft-glue-submission",
        "non-empty output, --force",
        submission(
            _users_directory,
            "--force",
            check=lambda o: (o / "MRPC.tsv").exists() and (o / "notes.txt").exists(),
        ),
        "correct",
    ),
    Case(
        "tft-glue-submission",
        "into the GLUE folder it reads, --force",
        submission(_glue_task_directory, "--force"),
        "error",
        ["MRPC"],
    ),
    Case(
        "tft-glue-submission",
        "an injection archive",
        submission(lambda d, a: d / "out", archive="injection"),
        "error",
        ["model.tar.gz"],
    ),
    Case(
        "tft-glue-submission",
        "disk full",
        submission(lambda d, a: d / "out", limit=100),
        "error",
        ["out"],
    ),
    Case(
        "tft-glue-submission",
        "new output",
        submission(lambda d, a: d / "out", check=lambda o: (o / "submission.zip").exists()),
        "correct",
    ),
]


# tft-experiment


def _spec(d: pathlib.Path, a: Artifacts, **changes) -> str:
    spec = {
        "output_dir": str(d / "grid"),
        "base_models": {"tiny": a.bert},
        "tasks": ["mrpc"],
        "glue_dir": str(FIXTURES_ROOT / "glue"),
        "variants": ["none"],
        "glue_overrides": {"trainer.num_epochs": 1},
        **changes,
    }
    (d / "spec.json").write_text(json.dumps(spec))
    return str(d / "spec.json")


def experiment_damaged_metrics(d, a):
    spec = _spec(d, a)

    def first_run():
        outcome = run_allennlp(["tft-experiment", spec], d)
        assert outcome.returncode == 0, outcome.stderr[-3000:]
        (metrics,) = (d / "grid").rglob("metrics.json")
        metrics.write_text("")
        # Its row in the grid's table cut short too, as a disk that filled up leaves it.
        table = d / "grid/runs.jsonl"
        table.write_text(table.read_text()[:40])

    def rerun_finished(o):
        (metrics,) = (d / "grid").rglob("metrics.json")
        return "best_epoch" in json.loads(metrics.read_text()) and "done" in o.stdout

    return Run(["tft-experiment", spec], before=first_run, check=rerun_finished)


def experiment_spec(**changes):
    def setup(d, a):
        return Run(["tft-experiment", _spec(d, a, **changes), "--report-only"])

    return setup


def experiment_spec_text(text: str):
    def setup(d, a):
        (d / "spec.json").write_text(text)
        return Run(["tft-experiment", str(d / "spec.json"), "--report-only"])

    return setup


def experiment_foreign_output(d, a):
    (d / "grid").mkdir()
    (d / "grid/thesis.tex").write_text("my thesis")
    return Run(["tft-experiment", _spec(d, a)])


EXPERIMENT = [
    Case(
        "tft-experiment",
        "finished run with an empty metrics.json and its row cut short",
        experiment_damaged_metrics,
        "correct",
    ),
    Case("tft-experiment", "unknown spec key", experiment_spec(seedz=[1, 2]), "error", ["seedz"]),
    Case(
        "tft-experiment",
        "spec value of the wrong type",
        experiment_spec(seeds="1"),
        "error",
        ["seeds"],
    ),
    Case(
        "tft-experiment",
        "spec is a JSON list",
        experiment_spec_text("[1, 2]"),
        "error",
        ["spec.json"],
    ),
    Case(
        "tft-experiment",
        "output directory of someone else",
        experiment_foreign_output,
        "error",
        ["grid", "--force"],
    ),
    Case(
        "tft-experiment",
        "missing spec",
        lambda d, a: Run(["tft-experiment", str(d / "no.json")]),
        "error",
        ["no.json"],
    ),
]


# allennlp train


def train_glue(**overrides):
    def setup(d, a):
        return Run(_train("glue/mrpc.jsonnet", d, a, **overrides), environment=_glue_environment(a))

    return setup


def train_glue_file(
    rows: Sequence[str], part: str = "train", newline: Optional[str] = None, fifo: bool = False
):
    """MRPC with its `part` file (train or dev) replaced."""

    def setup(d, a):
        glue = d / "glue"
        shutil.copytree(FIXTURES_ROOT / "glue/MRPC", glue / "MRPC")
        target = glue / "MRPC" / f"{part}.tsv"
        target.unlink()
        if fifo:
            _fifo(target)
        elif newline is not None:
            text = "".join(row + newline for row in rows)
            target.write_bytes(text.encode())
        else:
            _mrpc(glue / "MRPC", rows, f"{part}.tsv")
        return Run(_train("glue/mrpc.jsonnet", d, a), environment=_glue_environment(a, glue))

    return setup


def train_unlabelled(part: str):
    """MRPC with its `part` file replaced by the unlabelled test file."""

    def setup(d, a):
        glue = d / "glue"
        shutil.copytree(FIXTURES_ROOT / "glue/MRPC", glue / "MRPC")
        shutil.copy(glue / "MRPC/test.tsv", glue / "MRPC" / f"{part}.tsv")
        return Run(_train("glue/mrpc.jsonnet", d, a), environment=_glue_environment(a, glue))

    return setup


def train_injection_without_alignments(d, a):
    lines = []
    for raw in open(FIXTURES_ROOT / "paraphrase/aligned.jsonl"):
        record = json.loads(raw)
        record["alignments"] = []
        lines.append(json.dumps(record))
    (d / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    argv = _train("injection/tft.jsonnet", d, a, **_SPLIT)
    return Run(
        argv, environment={"TFT_MODEL": a.bert, "TFT_PARAPHRASE_CORPUS": str(d / "corpus.jsonl")}
    )


def train_recover_after_kill_in_config(d, a):
    """Killed right after its second file event (config.json begun), then --recover."""
    from tests.training.file_events import events_environment, watching_file_events

    argv = _train("glue/mrpc.jsonnet", d, a)

    def killed():
        environment = {
            **_glue_environment(a),
            **events_environment(d / "run", d / "events.log", kill_at=2),
        }
        with watching_file_events():
            outcome = run_allennlp(argv, d, environment)
        assert outcome.returncode == -9, outcome.stderr[-3000:]

    return Run(
        argv + ["--recover"],
        environment=_glue_environment(a),
        before=killed,
        check=lambda o: (d / "run/model.tar.gz").exists(),
    )


def train_disk_full(d, a):
    return Run(
        _train("glue/mrpc.jsonnet", d, a), environment=_glue_environment(a), file_size_limit=200_000
    )


def train_force_into_the_data(d, a):
    """`-s` the GLUE task folder the config reads, with --force (which deletes the folder)."""
    shutil.copytree(FIXTURES_ROOT / "glue/MRPC", d / "glue/MRPC")
    argv = _train("glue/mrpc.jsonnet", d, a)
    argv[argv.index("-s") + 1] = str(d / "glue/MRPC")
    train = d / "glue/MRPC/train.tsv"
    return Run(
        argv + ["--force"],
        environment=_glue_environment(a, d / "glue"),
        harmless=lambda: train.is_file(),
    )


TRAIN = [
    Case(
        "allennlp train",
        "-s the data folder, --force",
        train_force_into_the_data,
        "error",
        ["{dir}/glue/MRPC", "which the config reads"],
    ),
    Case(
        "allennlp train",
        "override trainer.num_epoch (a typo)",
        train_glue(**{"trainer.num_epoch": 2}),
        "error",
        ["trainer.num_epoch"],
    ),
    Case(
        "allennlp train",
        "override trainer.optimizer.lrr",
        train_glue(**{"trainer.optimizer.lrr": 0.1}),
        "error",
        ["lrr"],
    ),
    Case(
        "allennlp train",
        "override dataset_reader.max_lenght",
        train_glue(**{"dataset_reader.max_lenght": 64}),
        "error",
        ["max_lenght"],
    ),
    Case(
        "allennlp train",
        "training file without labels",
        train_unlabelled("train"),
        "error",
        ["train.tsv"],
    ),
    Case(
        "allennlp train",
        "validation file without labels",
        train_unlabelled("dev"),
        "error",
        ["dev.tsv"],
    ),
    Case(
        "allennlp train",
        "injection corpus without alignments",
        train_injection_without_alignments,
        "error",
        ["corpus.jsonl"],
    ),
    Case(
        "allennlp train",
        "training file is a named pipe",
        train_glue_file([], fifo=True),
        "error",
        ["train.tsv"],
    ),
    Case(
        "allennlp train",
        "training file with CR line endings",
        train_glue_file(["Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"] + MRPC_ROWS, newline="\r"),
        "error",
        ["train.tsv:1"],
    ),
    Case(
        "allennlp train",
        "a sentence of zero-width spaces",
        train_glue_file(MRPC_ROWS + [f"1\t9\t109\t{INVISIBLE}\tA man."]),
        "error",
        ["train.tsv:6"],
    ),
    Case(
        "allennlp train",
        "TFT_MODEL is a file",
        lambda d, a: Run(
            _train("glue/mrpc.jsonnet", d, a),
            environment={**_glue_environment(a), "TFT_MODEL": os.path.join(a.bert, "config.json")},
        ),
        "error",
        ["config.json"],
    ),
    Case(
        "allennlp train",
        "--recover after a kill while config.json was written",
        train_recover_after_kill_in_config,
        "correct",
    ),
    Case("allennlp train", "disk full", train_disk_full, "error", ["{dir}/run/"]),
]


# allennlp evaluate and predict


def evaluate(source: Callable[[pathlib.Path], str], run: str = "glue"):
    def setup(d, a):
        directory = a.glue_run if run == "glue" else a.injection_run
        return Run(
            ["evaluate", os.path.join(directory, "model.tar.gz"), source(d)],
            environment=_glue_environment(a),
            check=lambda o: "accuracy" in o.stdout + o.stderr,
        )

    return setup


def _invisible_dev(d):
    return _mrpc(d, MRPC_ROWS + [f"1\t9\t109\tA man.\t{INVISIBLE}"], "dev.tsv")


EVALUATE = [
    Case(
        "allennlp evaluate",
        "unlabelled test file",
        evaluate(lambda d: str(FIXTURES_ROOT / "glue/MRPC/test.tsv")),
        "error",
        ["test.tsv"],
    ),
    Case(
        "allennlp evaluate",
        "input is a named pipe",
        evaluate(lambda d: _fifo(d / "p.tsv")),
        "error",
        ["p.tsv"],
    ),
    Case(
        "allennlp evaluate",
        "a sentence of zero-width spaces",
        evaluate(_invisible_dev),
        "error",
        ["dev.tsv:6"],
    ),
    Case(
        "allennlp evaluate",
        "labelled dev file",
        evaluate(lambda d: str(FIXTURES_ROOT / "glue/MRPC/dev.tsv")),
        "correct",
    ),
]


def predict(lines: Sequence[dict], run: str = "injection", check=None):
    def setup(d, a):
        directory = a.glue_run if run == "glue" else a.injection_run
        (d / "in.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
        argv = [
            "predict",
            os.path.join(directory, "model.tar.gz"),
            str(d / "in.jsonl"),
            "--output-file",
            str(d / "out.jsonl"),
            "--silent",
        ]
        return Run(argv, check=(lambda o: check(d / "out.jsonl")) if check else None)

    return setup


LONG = " ".join(["the cat sat on the mat"] * 30)  # well over 128 wordpieces


def _every_pair_answered(path):
    pairs = json.loads(path.read_text().splitlines()[0])["phrase_pairs"]
    return len(pairs) == 2 and pairs[1].get("left_out") and pairs[0]["label"] is not None


PREDICT = [
    Case(
        "allennlp predict",
        "a phrase pair cut off by truncation",
        predict(
            [
                {
                    "sentence1": LONG,
                    "sentence2": "A cat sat .",
                    "phrase_pairs": [[[0, 1], [0, 1]], [[170, 172], [1, 2]]],
                }
            ],
            check=_every_pair_answered,
        ),
        "correct",
    ),
    Case(
        "allennlp predict",
        "a sentence of zero-width spaces",
        predict([{"sentence1": INVISIBLE, "sentence2": "A man plays."}], run="glue"),
        "error",
        ["{dir}/in.jsonl:1"],
    ),
    Case(
        "allennlp predict",
        "phrase spans out of range",
        predict(
            [{"source": ["A", "man"], "target": ["A", "man"], "phrase_pairs": [[[0, 5], [0, 1]]]}]
        ),
        "error",
        ["{dir}/in.jsonl:1"],
    ),
    Case(
        "allennlp predict",
        "sentence pairs",
        predict(
            [{"sentence1": "A man plays.", "sentence2": "A man is playing."}],
            run="glue",
            check=lambda p: "probs" in p.read_text() or "label" in p.read_text(),
        ),
        "correct",
    ),
]

# Untrusted archives (issue 62, item 1): every kind of malicious member or content, built from the
# MRPC archive, under every command that opens an archive. Right: exit non-zero with the last line
# naming the archive, and nothing written outside it nor any of its code run (else "silent").

OUTSIDE = "outside"  # the folder a malicious archive aims at, in the case's directory
VICTIM = ("victim.txt", "a file of the user's\n")


def _member(name: str, data: bytes = b"written by an archive\n") -> Tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _link(name: str, target: str, kind: bytes) -> Tuple[tarfile.TarInfo, Optional[bytes]]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, None


def _special(name: str, kind: bytes) -> Tuple[tarfile.TarInfo, Optional[bytes]]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.devmajor, info.devminor = 1, 3  # /dev/null's numbers, for the device
    return info, None


class _Pickled:
    """Unpickles as a call of `os.system`: what a weights file can hide."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def _edited_config(archive: str, edit: Callable[[dict], None]) -> bytes:
    with tarfile.open(archive) as tar:
        config = json.load(tar.extractfile("config.json"))
    edit(config)
    return json.dumps(config).encode()


def _embedder(config: dict) -> dict:
    return config["model"]["text_field_embedder"]["token_embedders"]["tokens"]


def _remote_code(config: dict) -> None:
    _embedder(config)["transformer_kwargs"] = {"trust_remote_code": True}


REMOTE_CODE = (
    "import pathlib\n"
    "from transformers import BertModel\n"
    "pathlib.Path({marker!r}).write_text('ran')\n"
    "class EvilModel(BertModel):\n"
    "    pass\n"
)


def _malicious(kind: str, archive: str, outside: pathlib.Path):
    """The members `kind` adds to `archive` and the members it replaces (name -> bytes)."""
    up = "../" * 40 + str(outside).lstrip("/")  # to the root from any extraction folder, and down
    marker = str(outside / "code_ran")
    if kind == "'..' path":
        return [_member(f"{up}/dotdot.txt")], {}
    if kind == "absolute path":
        return [_member(f"{outside}/absolute.txt")], {}
    if kind == "symlink out, then a file through it":
        return [_link("escape", str(outside), tarfile.SYMTYPE), _member("escape/via_link.txt")], {}
    if kind == "relative symlink out":
        return [_link("escape", "../" * 40, tarfile.SYMTYPE)], {}
    if kind == "hard link to a user's file, then written":
        target = str(outside / VICTIM[0])
        return [_link("victim", target, tarfile.LNKTYPE), _member("victim", b"overwritten\n")], {}
    if kind == "device":
        return [_special("disk", tarfile.CHRTYPE)], {}
    if kind == "named pipe":
        return [_special("pipe", tarfile.FIFOTYPE)], {}
    if kind == "pickled code as weights":
        return [], {"weights.th": pickle.dumps(_Pickled(f"touch {marker}"), protocol=2)}
    if kind == "a dotted type in the config":
        command = {"type": "os.system", "command": f"touch {marker}"}
        return [], {
            "config.json": _edited_config(archive, lambda c: c.update(dataset_reader=command))
        }
    if kind == "jsonnet in the config":
        with tarfile.open(archive) as tar:
            text = tar.extractfile("config.json").read().decode()
        leak = f'"model": {{"leak": importstr "{outside / VICTIM[0]}", '
        return [], {"config.json": text.replace('"model": {', leak, 1).encode()}
    if kind == "trust_remote_code with code in the archive":
        with tarfile.open(archive) as tar:
            (base,) = {
                os.path.dirname(m.name)
                for m in tar.getmembers()
                if m.name.startswith("pretrained_transformers/") and m.name.endswith("config.json")
            }
            base_config = json.load(tar.extractfile(f"{base}/config.json"))
        base_config["auto_map"] = {"AutoModel": "evil_model.EvilModel"}
        return [_member(f"{base}/evil_model.py", REMOTE_CODE.format(marker=marker).encode())], {
            "config.json": _edited_config(archive, _remote_code),
            f"{base}/config.json": json.dumps(base_config).encode(),
        }
    raise ValueError(kind)


ARCHIVE_KINDS = [
    "'..' path",
    "absolute path",
    "symlink out, then a file through it",
    "relative symlink out",
    "hard link to a user's file, then written",
    "device",
    "named pipe",
    "pickled code as weights",
    "a dotted type in the config",
    "jsonnet in the config",
    "trust_remote_code with code in the archive",
]


def malicious_archive(kind: str, archive: str, directory: pathlib.Path) -> str:
    """`archive` with `kind` of malice, written to `directory`; `outside/` holds the victim."""
    outside = directory / OUTSIDE
    outside.mkdir()
    (outside / VICTIM[0]).write_text(VICTIM[1])
    extra, replaced = _malicious(kind, archive, outside)
    return _rewritten(archive, directory, replaced, extra)


def _rewritten(
    archive: str,
    directory: pathlib.Path,
    replaced: Optional[Dict[str, bytes]] = None,
    added: Sequence[Tuple[tarfile.TarInfo, Optional[bytes]]] = (),
    left_out: Sequence[str] = (),
) -> str:
    """
    `archive` with members replaced (name -> bytes; `*/NAME`: each whose path ends so), added
    (`_member`, `_link`, `_special`) and left out, as DIR/model.tar.gz.
    """
    replaced = replaced or {}
    path = directory / "model.tar.gz"
    with tarfile.open(archive) as source, tarfile.open(path, "w:gz") as target:
        for member in source.getmembers():
            if member.name in left_out:
                continue
            data = source.extractfile(member).read() if member.isfile() else None
            for name, new in replaced.items():
                if member.name == name or (name.startswith("*") and member.name.endswith(name[1:])):
                    data = new
                    member.size = len(data)
            target.addfile(member, io.BytesIO(data) if data is not None else None)
        for member, data in added:
            target.addfile(member, io.BytesIO(data) if data is not None else None)
    return str(path)


def outside_untouched(directory: pathlib.Path) -> bool:
    """Whether `outside/` still holds only the victim file, unchanged."""
    outside = directory / OUTSIDE
    return _files(outside) == [VICTIM[0]] and (outside / VICTIM[0]).read_text() == VICTIM[1]


def archive_command(command: str, kind: str):
    def setup(d, a):
        archive = malicious_archive(kind, os.path.join(a.glue_run, "model.tar.gz"), d)
        environment = _glue_environment(a)
        if command == "predict":
            (d / "in.jsonl").write_text(json.dumps({"sentence1": "A man.", "sentence2": "A dog."}))
            argv = ["predict", archive, str(d / "in.jsonl"), "--output-file", str(d / "o.jsonl")]
        elif command == "evaluate":
            argv = ["evaluate", archive, str(FIXTURES_ROOT / "glue/MRPC/dev.tsv")]
        elif command == "tft-export":
            argv = ["tft-export", archive, str(d / "export")]
        elif command == "tft-glue-submission":
            argv = ["tft-glue-submission", str(d / "submission"), archive]
            argv += ["--glue-dir", str(FIXTURES_ROOT / "glue")]
        else:  # fine-tuning from the archive's encoder
            argv = _train("glue/mrpc.jsonnet", d, a)
            environment = {**environment, "TFT_MODEL": archive, "TFT_CACHE": str(d / "cache")}
        return Run(argv, environment=environment, harmless=lambda: outside_untouched(d))

    return setup


ARCHIVE_COMMANDS = ["predict", "evaluate", "tft-export", "tft-glue-submission", "train"]
SECURITY = [
    Case(
        "untrusted archives",
        f"{command}: {kind}",
        archive_command(command, kind),
        "error",
        ["model.tar.gz"],
    )
    for command in ARCHIVE_COMMANDS
    for kind in ARCHIVE_KINDS
]


# The encoder cache (`TFT_MODEL` an archive) and tft-align's workers (issue 62, item 4)


def _from_injection(d: pathlib.Path, a: Artifacts, cache: pathlib.Path) -> Dict[str, str]:
    """Fine-tuning from the injection archive, its encoder cached in `cache`."""
    model = os.path.join(a.injection_run, "model.tar.gz")
    return {**_glue_environment(a), "TFT_MODEL": model, "TFT_CACHE": str(cache)}


def cache_a_file(d, a):
    (d / "cache").write_text("")
    return Run(_train("glue/mrpc.jsonnet", d, a), environment=_from_injection(d, a, d / "cache"))


def cache_entry_without_weights(d, a):
    """A first fine-tuning fills the cache; its weights file is deleted; the next run rebuilds
    the entry, says so in one warning, and trains."""
    import hashlib

    environment = _from_injection(d, a, d / "cache")
    with open(environment["TFT_MODEL"], "rb") as handle:
        digest = hashlib.sha256(handle.read()).hexdigest()
    entry = d / "cache/encoders" / digest[:32]

    def first_run_then_damage():
        argv = _train("glue/mrpc.jsonnet", d, a)
        argv[argv.index("-s") + 1] = str(d / "first")
        outcome = run_allennlp(argv, d, environment)
        assert outcome.returncode == 0, outcome.stderr[-3000:]
        (entry / "model.safetensors").unlink()

    # One warning (on stderr from the `allennlp` command, in the log where the harness forks).
    warning = (
        f"The cached encoder {entry} is not used (model.safetensors is missing); rebuilding it "
        f"from {environment['TFT_MODEL']}"
    )

    def rebuilt(outcome: Outcome) -> bool:
        # Imported here: a tree from before the check (`--tree`) still runs the case.
        from tft_allennlp.archives.cache_manifest import entry_problem

        return (
            (outcome.stdout + outcome.stderr).count(warning) == 1
            and (d / "run/model.tar.gz").exists()
            and entry_problem(str(entry), digest) is None
        )

    return Run(
        _train("glue/mrpc.jsonnet", d, a),
        environment=environment,
        before=first_run_then_damage,
        check=rebuilt,
    )


def align_killed_with_workers(d, a):
    """`tft-align --workers 2` SIGKILLed once its workers have sent results: none of its
    processes (workers, multiprocessing's resource tracker) is left 1.5 s later, and the next
    run writes the output and removes the killed run's draft."""
    (d / "pairs.tsv").write_text(PAIRS)
    header, *rows = PAIRS.splitlines()
    (d / "many.tsv").write_text("\n".join([header] + rows * 3000) + "\n")
    killed = ["tft-align", str(d / "many.tsv"), str(d / "out.jsonl")]
    killed += ["--workers", "2", "--batch-size", "4"]
    left: List[str] = []

    def kill_once_workers_answer():
        left.extend(_left_after_sigkill(killed, d, "out.jsonl.*.tmp"))

    return Run(
        ["tft-align", str(d / "pairs.tsv"), str(d / "out.jsonl")],
        before=kill_once_workers_answer,
        check=lambda o: (
            left == []
            and _files(d) == ["killed.log", "many.tsv", "out.jsonl", "pairs.tsv"]
            and len((d / "out.jsonl").read_text().splitlines()) == 2
        ),
    )


def _left_after_sigkill(argv: List[str], d: pathlib.Path, draft: str) -> List[str]:
    """
    Starts `allennlp ARGV` in a forked child, SIGKILLs it once it has two pool workers and a
    non-empty `draft` (results came back from them), and returns its child processes still
    running 1.5 s later (then kills them), as `pid cmdline`; or why it never got that far.
    """
    import psutil

    def running(process: psutil.Process) -> bool:
        try:
            return process.status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    def workers(process: psutil.Process) -> List[psutil.Process]:
        found = []
        for child in process.children():
            try:
                if "spawn_main" in " ".join(child.cmdline()):
                    found.append(child)
            except psutil.Error:
                pass  # ended meanwhile
        return found

    with open(d / "killed.log", "w") as log:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        pid = os.fork()
        if pid == 0:
            os._exit(_run_allennlp(argv, log.fileno(), log.fileno(), {}))
    process = psutil.Process(pid)
    deadline = time.monotonic() + TIME_LIMIT
    while time.monotonic() < deadline and process.status() != psutil.STATUS_ZOMBIE:
        answered = any(path.stat().st_size > 0 for path in d.glob(draft))
        if answered and len(workers(process)) == 2:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return ["the run never had two workers that answered (see killed.log)"]
    children = process.children()
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    killed = time.monotonic()
    while any(running(child) for child in children) and time.monotonic() - killed < 1.5:
        time.sleep(0.05)
    left = []
    for child in children:
        if running(child):
            try:
                left.append(f"{child.pid} {' '.join(child.cmdline())}")
                child.kill()
            except psutil.Error:
                pass  # ended meanwhile
    return left


CACHE_62 = [
    Case(
        "allennlp train",
        "TFT_CACHE is a file",
        cache_a_file,
        "error",
        ["TFT_CACHE={dir}/cache is not a folder; point it at a folder"],
    ),
    Case(
        "allennlp train",
        "the cached encoder lost its weights",
        cache_entry_without_weights,
        "correct",
    ),
    Case(
        "tft-align",
        "SIGKILL with --workers 2, then run again",
        align_killed_with_workers,
        "correct",
    ),
]

# What AllenNLP's predict and evaluate read and write (issue 62: outputs that are inputs, true
# line numbers, invalid UTF-8) and CoLA's header (a first sentence that is the word "sentence")


def _predict_62(content: bytes, output: str = "out.jsonl", link: Optional[str] = None):
    """
    `allennlp predict` of the case's own copy of the MRPC archive (`model.tar.gz`) on `in.jsonl`
    holding `content`, into `output`; `link` makes `output` a symbolic ("symlink") or hard
    ("hard") link to `in.jsonl`.
    """

    def setup(d, a):
        (d / "in.jsonl").write_bytes(content)
        (d / "sub").mkdir()  # so that `sub/../in.jsonl` can be opened
        if link == "symlink":
            (d / output).symlink_to("in.jsonl")
        elif link == "hard":
            os.link(d / "in.jsonl", d / output)
        # A copy: were it written over, the other cases' archive would be lost.
        shutil.copy(os.path.join(a.glue_run, "model.tar.gz"), d / "model.tar.gz")
        argv = ["predict", str(d / "model.tar.gz"), str(d / "in.jsonl")]
        argv += ["--output-file", os.path.join(str(d), output), "--silent"]
        return Run(argv, check=lambda o: len((d / output).read_text().splitlines()) == 2)

    return setup


def _evaluate_62(option: str):
    """`allennlp evaluate` of a copy of MRPC's dev file, writing `option` over it."""

    def setup(d, a):
        shutil.copy(FIXTURES_ROOT / "glue/MRPC/dev.tsv", d / "dev.tsv")
        argv = ["evaluate", os.path.join(a.glue_run, "model.tar.gz"), str(d / "dev.tsv")]
        return Run(argv + [option, str(d / "dev.tsv")], environment=_glue_environment(a))

    return setup


def _cola_first_sentence_sentence(d, a):
    glue = d / "glue"
    shutil.copytree(FIXTURES_ROOT / "glue/CoLA", glue / "CoLA")
    train = glue / "CoLA/train.tsv"
    train.write_text("gj04\t1\t\tsentence\n" + train.read_text())
    return Run(
        _train("glue/cola.jsonnet", d, a),
        environment=_glue_environment(a, glue),
        check=lambda o: (d / "run/model.tar.gz").exists(),
    )


_PAIR_62 = json.dumps({"sentence1": "A man plays.", "sentence2": "A man is playing."})
_TWO_PAIRS = f"{_PAIR_62}\n{_PAIR_62}\n".encode()

INPUTS_62 = [
    Case(
        "allennlp predict",
        "output file is its input (another spelling)",
        _predict_62(_TWO_PAIRS, output="sub/../in.jsonl"),
        "error",
        ["sub/../in.jsonl", "{dir}/in.jsonl"],
    ),
    Case(
        "allennlp predict",
        "output file is a symbolic link to its input",
        _predict_62(_TWO_PAIRS, output="link.jsonl", link="symlink"),
        "error",
        ["{dir}/link.jsonl", "{dir}/in.jsonl"],
    ),
    Case(
        "allennlp predict",
        "output file is a hard link to its input",
        _predict_62(_TWO_PAIRS, output="hard.jsonl", link="hard"),
        "error",
        ["{dir}/hard.jsonl", "{dir}/in.jsonl"],
    ),
    Case(
        "allennlp predict",
        "output file is the archive",
        _predict_62(_TWO_PAIRS, output="model.tar.gz"),
        "error",
        ["{dir}/model.tar.gz"],
    ),
    Case(
        "allennlp predict",
        "a bad line after blank lines",
        _predict_62(
            f"{_PAIR_62}\n\n \n{_PAIR_62}\n".encode()
            + json.dumps({"sentence1": "A man plays.", "sentence2": ""}).encode()
            + b"\n"
        ),
        "error",
        ["{dir}/in.jsonl:5"],
    ),
    Case(
        "allennlp predict",
        "a line that is not UTF-8 (Latin-1)",
        _predict_62(
            _PAIR_62.encode()
            + b"\n"
            + _PAIR_62.replace("plays", "pl\xe9ys").encode("latin-1")
            + b"\n"
        ),
        "error",
        ["{dir}/in.jsonl:2"],
    ),
    Case(
        "allennlp predict",
        "blank lines and a byte-order mark",
        _predict_62(b"\xef\xbb\xbf" + f"{_PAIR_62}\n\n\n{_PAIR_62}\n".encode()),
        "correct",
    ),
    Case(
        "allennlp evaluate",
        "metrics output file is its input",
        _evaluate_62("--output-file"),
        "error",
        ["{dir}/dev.tsv: is the input file {dir}/dev.tsv"],
    ),
    Case(
        "allennlp evaluate",
        "predictions output file is its input",
        _evaluate_62("--predictions-output-file"),
        "error",
        ["{dir}/dev.tsv: is the input file {dir}/dev.tsv"],
    ),
    Case(
        "allennlp train",
        "headerless CoLA whose first sentence is the word 'sentence'",
        _cola_first_sentence_sentence,
        "correct",
    ),
]


# tft-experiment: a spec changed since its grid ran, or wrong before any run starts (issue 62,
# item 3). Right: a changed spec that would report finished runs under it is refused in one line
# naming the key (or, with --force, trains them again); a wrong spec is one line naming the key
# and starts no run.

_EPOCHS_2 = {"trainer.num_epochs": 2, "data_loader.batch_size": 8}
_EPOCHS_1 = {"trainer.num_epochs": 1, "data_loader.batch_size": 4}


def experiment_changed_spec(*flags: str):
    """A grid finished with two epochs of batches of 8, run again with one epoch of 4."""

    def setup(d, a):
        spec = _spec(d, a, train_sizes=[8], glue_overrides=_EPOCHS_2)

        def first_run():
            outcome = run_allennlp(["tft-experiment", spec], d)
            assert outcome.returncode == 0, outcome.stderr[-3000:]
            _spec(d, a, train_sizes=[8], glue_overrides=_EPOCHS_1)

        def trained_again(o):
            config = d / "grid/glue/tiny/none/paper/mrpc/n8/seed1/config.json"
            trainer = json.loads(config.read_text())["trainer"]
            recorded = json.loads((d / "grid/spec.json").read_text())["glue_overrides"]
            return "1 done" in o.stdout and trainer["num_epochs"] == 1 and recorded == _EPOCHS_1

        return Run(["tft-experiment", spec, *flags], before=first_run, check=trained_again)

    return setup


def experiment_runs_spec(**changes):
    """The grid run (not --report-only) with `changes` to the spec (`{dir}`: the case's)."""

    def setup(d, a):
        here = json.loads(json.dumps(changes).replace("{dir}", str(d)))
        return Run(["tft-experiment", _spec(d, a, **here)])

    return setup


_PAIRS_TASK = {
    "task": {"sentence1": "first", "sentence2": "second", "label": "verdict", "labels": ["s", "d"]},
    "train_data_path": "{dir}/data/train.tsv",
    "validation_data_path": "{dir}/data/dev.tsv",
}

EXPERIMENT_SPEC_62 = [
    Case(
        "tft-experiment",
        "rerun with changed glue_overrides",
        experiment_changed_spec(),
        "error",
        ["glue_overrides", "--force"],
    ),
    Case(
        "tft-experiment",
        "rerun with changed glue_overrides, --force",
        experiment_changed_spec("--force"),
        "correct",
    ),
    Case(
        "tft-experiment",
        "negative train_sizes",
        experiment_runs_spec(train_sizes=[8, -8]),
        "error",
        ["{dir}/spec.json", "train_sizes"],
    ),
    Case("tft-experiment", "tasks: []", experiment_runs_spec(tasks=[]), "error", ["tasks"]),
    Case(
        "tft-experiment",
        "custom task without its files",
        experiment_runs_spec(tasks=["pairs"], custom_tasks={"pairs": _PAIRS_TASK}),
        "error",
        ["train_data_path", "{dir}/data/train.tsv"],
    ),
]


# Hostile archives, part two (issue 74): configs that were read before they were checked, bombs,
# weights that do not fit, model cards, and values of the environment.

SECRET = "s3cret-7f3a"  # in a file and a variable that an archive's config tries to read


def _member_text(archive: str, name: str) -> str:
    """The text of `name` in `archive` (`*/NAME`: the first member whose path ends so)."""
    with tarfile.open(archive) as tar:
        if name.startswith("*"):
            name = next(m for m in tar.getnames() if m.endswith(name[1:]) and "/" in m)
        return tar.extractfile(name).read().decode()


def _member_names(archive: str) -> List[str]:
    with tarfile.open(archive) as tar:
        return tar.getnames()


def _archive_command(command: str, archive: str, d: pathlib.Path) -> List[str]:
    if command == "predict":
        (d / "in.jsonl").write_text(json.dumps({"sentence1": "A man.", "sentence2": "A dog."}))
        return ["predict", archive, str(d / "in.jsonl"), "--output-file", str(d / "o.jsonl")]
    if command == "evaluate":
        return ["evaluate", archive, str(FIXTURES_ROOT / "glue/MRPC/dev.tsv")]
    return ["tft-export", archive, str(d / "export")]


def _hostile_config(
    kind: str, archive: str, d: pathlib.Path, bert: str, config: str
) -> Dict[str, bytes]:
    """The members that `kind` of hostile config replaces in `archive` (whose config.json is
    `config`, of a model on the checkpoint `bert`)."""
    if kind == "jsonnet doing exponential work":
        program = "local f(n) = if n == 0 then 1 else f(n - 1) + f(n - 1);\n" + config.replace(
            '"model": {', '"model": {"work": f(60), ', 1
        )
        return {"config.json": program.encode()}
    if kind == "jsonnet reading a file and a variable":
        (d / "secret.txt").write_text(SECRET)
        # jsonnet's `error` puts what it read into the message that the command prints.
        read = f'(importstr "{d / "secret.txt"}") + std.extVar("TFT_SECRET")'
        leak = f'"model": error {read}, "x": {{'
        return {"config.json": config.replace('"model": {', leak, 1).encode()}
    if kind == "config nested 200,000 deep":
        return {"config.json": ("[" * 200_000 + "]" * 200_000).encode()}
    if kind == "truncated config.json":
        return {"config.json": config[:100].encode()}
    if kind == "meta.json that is not JSON":
        return {"meta.json": b'{"version": '}
    if kind == "a base config of 30M words (3.6 GB)":
        base = json.loads(_member_text(archive, "*/config.json"))
        return {"*/config.json": json.dumps({**base, "vocab_size": 30_000_000}).encode()}
    if kind == "a base model it holds no copy of (a hub name)":
        return {"config.json": config.replace(f'"{bert}"', '"bert-base-uncased"').encode()}
    raise ValueError(kind)


HOSTILE_CONFIG_KINDS = [
    "jsonnet doing exponential work",
    "jsonnet reading a file and a variable",
    "config nested 200,000 deep",
    "truncated config.json",
    "meta.json that is not JSON",
]
# Under predict only: found by the attack on the guards themselves.
BASE_MODEL_KINDS = [
    "a base config of 30M words (3.6 GB)",
    "a base model it holds no copy of (a hub name)",
]


def hostile_config(command: str, kind: str):
    def setup(d, a):
        source = os.path.join(a.glue_run, "model.tar.gz")
        config = _member_text(source, "config.json")
        replaced = _hostile_config(kind, source, d, a.bert, config)
        if "no copy" in kind:  # the copy's folder is named after the checkpoint
            left_out = [m for m in _member_names(source) if m.startswith("pretrained_transformers")]
            return Run(
                _archive_command(command, _rewritten(source, d, replaced, left_out=left_out), d),
                environment=_glue_environment(a),
            )
        archive = _rewritten(source, d, replaced)
        environment = {**_glue_environment(a), "TFT_SECRET": SECRET}
        return Run(_archive_command(command, archive, d), environment=environment, secret=SECRET)

    return setup


HOSTILE_CONFIGS = [
    Case(
        "hostile configs",
        f"{command}: {kind}",
        hostile_config(command, kind),
        "error",
        ["model.tar.gz", "meta.json" if "meta" in kind else "config.json"],
    )
    for command in ("predict", "tft-export")
    for kind in HOSTILE_CONFIG_KINDS
] + [
    Case("hostile configs", f"predict: {kind}", hostile_config("predict", kind), "error", names)
    for kind, names in zip(
        BASE_MODEL_KINDS, (["model.tar.gz", "config.json"], ["model.tar.gz", "bert-base-uncased"])
    )
]


def bomb(command: str):
    """
    The archive with its weights.th 8 GiB of zeros (8 MB compressed): TMPDIR must stay empty, and
    a disk with 1 GiB to spare (a file size limit) must not fill.
    """

    def setup(d, a):
        from tests.common.tar_members import write_bomb

        source = os.path.join(a.glue_run, "model.tar.gz")
        with tarfile.open(source) as tar:
            before = [
                (member, tar.extractfile(member).read() if member.isfile() else None)
                for member in tar.getmembers()
                if member.name != "weights.th"
            ]
        archive = write_bomb(d / "model.tar.gz", "weights.th", 8 * 2**30, before)
        (d / "tmp").mkdir()
        environment = {**_glue_environment(a), "TMPDIR": str(d / "tmp")}
        return Run(
            _archive_command(command, archive, d),
            environment=environment,
            harmless=lambda: _files(d / "tmp") == [],
            file_size_limit=2**30,
        )

    return setup


def hard_link_bomb(d, a):
    """A member loading skips, 50 MiB of zeros, then 20 hard links to it among the members it
    reads: each link would copy it out of the archive (1 GB from 100 KB); TMPDIR stays empty."""
    links = [_link(f"vocabulary/.copy{i}", "junk.bin", tarfile.LNKTYPE) for i in range(20)]
    added = [_member("junk.bin", bytes(50 * 2**20)), *links]
    path = _rewritten(os.path.join(a.glue_run, "model.tar.gz"), d, added=added)
    (d / "tmp").mkdir()
    environment = {**_glue_environment(a), "TMPDIR": str(d / "tmp")}
    return Run(
        _archive_command("predict", path, d),
        environment=environment,
        harmless=lambda: _files(d / "tmp") == [],
    )


BOMBS = [
    Case("bombs", f"{command}: 8 GiB of zeros in 8 MB", bomb(command), "error", ["model.tar.gz"])
    for command in ("predict", "tft-export")
] + [
    Case(
        "bombs",
        "predict: 20 hard links to a skipped 50 MiB member",
        hard_link_bomb,
        "error",
        ["model.tar.gz", "junk.bin"],
    )
]


def _weights_bytes(state) -> bytes:
    import torch

    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


def _bad_weights(kind: str, archive: str) -> Tuple[Dict[str, bytes], List[str]]:
    """The members `kind` replaces, and those it leaves out."""
    import torch

    with tarfile.open(archive) as tar:
        state = torch.load(io.BytesIO(tar.extractfile("weights.th").read()), weights_only=True)
    floating = [name for name, tensor in state.items() if tensor.is_floating_point()]
    if kind == "NaN weights":
        state[floating[0]] = torch.full_like(state[floating[0]], float("nan"))
    elif kind == "int8 weights":
        state[floating[0]] = state[floating[0]].to(torch.int8)
    elif kind == "a list as weights":
        state = [1, 2]
    elif kind == "a tensor of another shape":
        state[floating[0]] = state[floating[0]][:-1]
    elif kind == "a tensor missing":
        del state[floating[-1]]
    elif kind == "a tensor the model lacks":
        state["extra.weight"] = torch.ones(2)
    elif kind == "a pooler with a lying safetensors header":
        header = json.dumps(
            {"dense.weight": {"dtype": "F32", "shape": [1000, 1000], "data_offsets": [0, 4000000]}}
        ).encode()
        lying = len(header).to_bytes(8, "little") + header + bytes(16)
        return {"*/dropped_pooler.safetensors": lying}, []
    elif kind == "no weights.th":
        return {}, ["weights.th"]
    elif kind == "a vocabulary file without the unknown word":
        return {}, []  # added by `bad_weights`
    else:
        raise ValueError(kind)
    return {"weights.th": _weights_bytes(state)}, []


WEIGHT_KINDS = {
    "NaN weights": "weights.th",
    "int8 weights": "weights.th",
    "a list as weights": "weights.th",
    "a tensor of another shape": "weights.th",
    "a tensor missing": "weights.th",
    "a tensor the model lacks": "weights.th",
    "a pooler with a lying safetensors header": "dropped_pooler.safetensors",
    "no weights.th": "holds no weights.th",
    "a vocabulary file without the unknown word": "vocabulary/ .txt",
}


def bad_weights(command: str, kind: str):
    def setup(d, a):
        source = os.path.join(a.glue_run, "model.tar.gz")
        replaced, left_out = _bad_weights(kind, source)
        added = [_member("vocabulary/ .txt", b"a\nb\n")] if "vocabulary" in kind else []
        archive = _rewritten(source, d, replaced, added, left_out)
        return Run(_archive_command(command, archive, d), environment=_glue_environment(a))

    return setup


WEIGHTS = [
    Case(
        "weights",
        f"{command}: {kind}",
        bad_weights(command, kind),
        "error",
        ["model.tar.gz", WEIGHT_KINDS[kind]],
    )
    for command, kinds in (
        ("predict", list(WEIGHT_KINDS)),
        ("evaluate", ["a tensor of another shape"]),
        ("tft-export", ["NaN weights", "int8 weights", "a pooler with a lying safetensors header"]),
    )
    for kind in kinds
]

HOSTILE_VALUES = {
    "lr": "<script>alert(1)</script>",
    "validation_metric": "+<img src=x onerror=alert(1)>",
    "num_epochs": "[x](javascript:alert(1))\n---\nlicense: evil\n",
}


def _card_is_safe(card: pathlib.Path) -> bool:
    import yaml
    from markdown_it import MarkdownIt

    text = card.read_text()
    _, header, body = text.split("---\n", 2)
    html = MarkdownIt("commonmark", {"html": True}).render(body)
    return (
        isinstance(yaml.safe_load(header), dict)
        and "license" not in yaml.safe_load(header)
        and not any(tag in html for tag in ("<script", "<img", 'href="javascript:'))
        and "2718" not in text  # the outside file's line count
        and SECRET not in text
    )


def card_of_hostile_values(d, a):
    source = os.path.join(a.glue_run, "model.tar.gz")
    config = json.loads(_member_text(source, "config.json"))
    config["trainer"]["optimizer"]["lr"] = HOSTILE_VALUES["lr"]
    config["trainer"]["validation_metric"] = HOSTILE_VALUES["validation_metric"]
    config["trainer"]["num_epochs"] = HOSTILE_VALUES["num_epochs"]
    outside = d / "outside.tsv"  # what the card must not open: 2,718 lines
    outside.write_text(f"{SECRET}\n" * 2718)
    config["train_data_path"] = str(outside)
    archive = _rewritten(source, d, {"config.json": json.dumps(config).encode()})
    return Run(
        ["tft-export", archive, str(d / "export")],
        environment=_glue_environment(a),
        check=lambda o: _card_is_safe(d / "export" / "README.md"),
    )


CARDS = [
    Case("cards", "tft-export: hostile values in the config", card_of_hostile_values, "correct")
]


def _loop(d: pathlib.Path) -> str:
    os.symlink(d / "loop", d / "loop")
    return str(d / "loop")


def train_with(variable: str, value: Callable[[pathlib.Path], str]):
    def setup(d, a):
        environment = {**_glue_environment(a), variable: value(d)}
        return Run(_train("glue/mrpc.jsonnet", d, a), environment=environment)

    return setup


def predict_to(path: str):
    def setup(d, a):
        archive = os.path.join(a.glue_run, "model.tar.gz")
        (d / "in.jsonl").write_text(json.dumps({"sentence1": "A man.", "sentence2": "A dog."}))
        return Run(["predict", archive, str(d / "in.jsonl"), "--output-file", path])

    return setup


ENVIRONMENT_VALUES = [
    Case(
        "environment values",
        "TFT_MODEL empty",
        train_with("TFT_MODEL", lambda d: ""),
        "error",
        ["TFT_MODEL", "empty"],
    ),
    Case(
        "environment values",
        "TFT_MODEL a symbolic link loop",
        train_with("TFT_MODEL", _loop),
        "error",
        ["{dir}/loop", "TFT_MODEL"],
    ),
    Case(
        "environment values",
        "GLUE_DIR empty",
        train_with("GLUE_DIR", lambda d: ""),
        "error",
        ["GLUE_DIR", "empty"],
    ),
    Case(
        "environment values",
        "predict --output-file /dev/full",
        predict_to("/dev/full"),
        "error",
        ["/dev/full"],
    ),
]


def train_beside_a_live_run(*flags: str):
    """
    `allennlp train -s RUN` (seed 2) while another (seed 1) holds RUN at its start: its
    config.json, meta.json and vocabulary written, nothing trained. The first run must end
    whole, its own files in RUN.
    """

    def setup(d, a):
        release, holding = d / "release", d / "holding"
        hold = {"type": "test_hold", "release": str(release), "holding": str(holding)}
        first = _train("glue/mrpc.jsonnet", d, a, **{"trainer.callbacks": [hold]}, random_seed=1)
        first += ["--include-package", "tests.training.callbacks.hold"]
        environment = _glue_environment(a)
        ended: Dict[str, Outcome] = {}
        thread = threading.Thread(
            target=lambda: ended.update(first=run_allennlp(first, d, environment))
        )

        def before() -> None:
            thread.start()
            deadline = time.monotonic() + TIME_LIMIT
            while not holding.exists() and thread.is_alive() and time.monotonic() < deadline:
                time.sleep(0.05)

        def first_run_whole() -> bool:
            release.touch()
            thread.join()
            config = json.loads((d / "run" / "config.json").read_text())
            return (
                ended["first"].returncode == 0
                and config.get("random_seed") == 1
                and (d / "run" / "model.tar.gz").is_file()
            )

        second = _train("glue/mrpc.jsonnet", d, a, random_seed=2) + list(flags)
        return Run(second, environment=environment, before=before, harmless=first_run_whole)

    return setup


def evaluate_into_one_file(d, a):
    archive = os.path.join(a.glue_run, "model.tar.gz")
    dev = str(FIXTURES_ROOT / "glue/MRPC/dev.tsv")
    outputs = ["--output-file", str(d / "m.json"), "--predictions-output-file", str(d / "m.json")]
    return Run(["evaluate", archive, dev, *outputs], environment=_glue_environment(a))


CONCURRENCY = [
    Case(
        "concurrency",
        "train into a folder a live run holds",
        train_beside_a_live_run(),
        "error",
        ["{dir}/run"],
    ),
    Case(
        "concurrency",
        "train --recover on a folder a live run holds",
        train_beside_a_live_run("--recover"),
        "error",
        ["{dir}/run"],
    ),
    Case(
        "concurrency",
        "evaluate: metrics and predictions to one file",
        evaluate_into_one_file,
        "error",
        ["m.json", "--predictions-output-file"],
    ),
]


CASES: List[Case] = (
    ALIGN
    + EXPORT
    + SUBMISSION
    + EXPERIMENT
    + TRAIN
    + EVALUATE
    + PREDICT
    + SECURITY
    + CACHE_62
    + EXPERIMENT_SPEC_62
    + INPUTS_62
    + HOSTILE_CONFIGS
    + BOMBS
    + WEIGHTS
    + CARDS
    + CONCURRENCY
    + ENVIRONMENT_VALUES
)
FAMILIES = list(dict.fromkeys(case.family for case in CASES))


def case_id(case: Case) -> str:
    return f"{case.family}: {case.name}"
