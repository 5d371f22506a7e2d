"""
Runs `allennlp` commands in child processes, as a user does: the recovery and distributed tests
need real processes (SIGKILL, gloo workers), and so do the experiment harness's tests, whose
shards share a grid and whose runs each get a process.

A child is forked from the test process rather than started afresh: it runs the same `allennlp`
entry point with the same arguments, but skips the ten-odd seconds a new interpreter spends
importing torch, transformers and AllenNLP, which these tests would otherwise pay about forty
times. What a fork inherits that a new process would not have is reset in the child: the working
directory, AllenNLP's cache of loaded transformers, the test runner's log handlers and output
capture, and the `__main__` module (so that AllenNLP's gloo workers, started with "spawn", import
nothing of the test runner). The child computes on one CPU thread (see `_run_allennlp`); gloo
workers, fresh interpreters, on torch's default. A process that has initialised CUDA cannot be
forked into one that uses it: from then on (a GPU machine) the children are new interpreters again.
"""

import contextlib
import fcntl
import json
import logging
import os
import pathlib
import pty
import struct
import subprocess
import sys
import tempfile
import termios
import traceback
import types
from typing import IO, Any, Callable, Dict, List, Optional, Tuple

import pytest
import torch
from allennlp.commands import main
from allennlp.common import Params, cached_transformers
from allennlp.common.util import install_sigterm_handler

from tests import PROJECT_ROOT
from tft_experiments import training
from tft_host_patches import console, progress

LOG_FORMAT = "%(asctime)s - %(levelname)s - %(name)s - %(message)s"  # allennlp/__main__.py's


def write_config(
    path: pathlib.Path,
    config: pathlib.Path,
    overrides: Dict[str, Any],
    edit: Optional[Callable[[Dict[str, Any]], None]] = None,
) -> pathlib.Path:
    """Writes `config` with `overrides` (and then `edit`, for list-valued changes) to `path`."""
    params = Params.from_file(str(config), json.dumps(overrides)).as_dict(quiet=True)
    if edit is not None:
        edit(params)
    path.write_text(json.dumps(params))
    return path


def allennlp_train(config: pathlib.Path, serialization_dir: pathlib.Path, *flags: str):
    """`allennlp train` from the project root (so the plugin file is found), output captured."""
    arguments = ["train", str(config), "-s", str(serialization_dir)]
    arguments += ["--include-package", "tests.training.callbacks.sigkill"]
    arguments += ["--include-package", "tests.training.callbacks.record_batches", *flags]
    (result,) = forked_allennlp(arguments)
    return result


def forked_allennlp(
    *commands: List[str],
    environments: Optional[List[Dict[str, str]]] = None,
    together: bool = False,
    as_program: bool = False,
) -> List[subprocess.CompletedProcess]:
    """
    `allennlp ARGUMENTS` for each of `commands`, all at once, each in a forked child (with the
    variables of the matching `environments`, if given); for each, its exit code (negative:
    killed by that signal), standard output and standard error, as
    `subprocess.run(..., capture_output=True, text=True)` gives them. With `together`, the
    children wait until all are forked, then start at the same instant (races); with
    `as_program`, each is the `allennlp` program as a user runs it (`_run_allennlp`).
    """
    environments = environments or [{} for _ in commands]
    gate, opening = os.pipe() if together else (None, None)
    with tempfile.TemporaryDirectory() as directory:
        children = []
        for index, (arguments, environment) in enumerate(zip(commands, environments)):
            paths = [os.path.join(directory, f"{index}.{name}") for name in ("stdout", "stderr")]
            files = [open(path, "w") for path in paths]
            child = fork_allennlp(arguments, *files, environment, gate, as_program)
            children.append((arguments, paths, child))
            for file in files:
                file.close()
        if gate is not None and opening is not None:
            os.close(gate)
            os.write(opening, b"x" * len(commands))
            os.close(opening)
        results = []
        for arguments, paths, wait in children:
            returncode = wait()
            stdout, stderr = (pathlib.Path(path).read_text(errors="replace") for path in paths)
            results.append(
                subprocess.CompletedProcess(["allennlp", *arguments], returncode, stdout, stderr)
            )
    return results


def forked_run_allennlp(arguments: List[str], log: IO[str], environment: Dict[str, str]) -> int:
    """What `tft_experiments.training.run_allennlp` does, in a forked child."""
    return fork_allennlp(arguments, log, log, environment)()


@contextlib.contextmanager
def forked_experiment_runs():
    """While open, the experiment harness runs `allennlp train` in forked children."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(training, "run_allennlp", forked_run_allennlp)
        yield


def fork_allennlp(
    arguments: List[str],
    stdout: IO[str],
    stderr: IO[str],
    environment: Optional[Dict[str, str]] = None,
    gate: Optional[int] = None,
    as_program: bool = False,
) -> Callable[[], int]:
    """
    Starts `allennlp ARGUMENTS` in a forked child writing to `stdout` and `stderr`; a function
    that waits for it and returns its exit code (negative: killed by that signal). With `gate`
    (the reading end of a pipe), the child first waits for a byte from it; `as_program` is
    `_run_allennlp`'s. Once this process has initialised CUDA a forked child could not use it,
    so then the child is a new interpreter, as the harness starts it (at once).
    """
    for stream in (sys.stdout, sys.stderr, stdout, stderr):
        stream.flush()
    environment = {**(environment or {})}
    # The project root on the path, for the tests' `--include-package` modules.
    path = environment.get("PYTHONPATH", os.environ.get("PYTHONPATH"))
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), path]))
    if torch.cuda.is_initialized():
        command = [sys.executable, "-m", "allennlp", *arguments]
        process = subprocess.Popen(
            command,
            cwd=PROJECT_ROOT,
            stdout=stdout,
            stderr=stderr,
            env={**os.environ, **environment},
        )
        return process.wait
    pid = os.fork()
    if pid == 0:  # the child never returns into the test
        if gate is not None:
            os.read(gate, 1)
        code = _run_allennlp(arguments, stdout.fileno(), stderr.fileno(), environment, as_program)
        os._exit(code)

    def wait() -> int:
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status)

    return wait


def on_a_terminal(
    arguments: List[str], columns: Optional[int] = None, separate_stderr: bool = False
) -> Tuple[int, str, str]:
    """
    `allennlp ARGUMENTS`, forked as the program, with a pseudo-terminal as its stdout (and its
    stderr, unless `separate_stderr` sends that to a pipe), `columns` wide where given: its exit
    code, what the terminal showed, and what went to the pipe.
    """
    controller, terminal = pty.openpty()
    if columns is not None:
        fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    errors_read, errors_write = os.pipe() if separate_stderr else (None, terminal)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:
        os.close(controller)
        if errors_read is not None:
            os.close(errors_read)
        os._exit(_run_allennlp(arguments, terminal, errors_write, {}, as_program=True))
    os.close(terminal)
    if errors_read is not None:
        os.close(errors_write)
    shown = b""
    while True:
        try:
            block = os.read(controller, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not block:
            break
        shown += block
    os.close(controller)
    errors = b""
    if errors_read is not None:
        with os.fdopen(errors_read, "rb") as stream:
            errors = stream.read()
    _, status = os.waitpid(pid, 0)
    return (
        os.waitstatus_to_exitcode(status),
        shown.decode(errors="replace"),
        errors.decode(errors="replace"),
    )


def _run_allennlp(
    arguments: List[str],
    stdout: int,
    stderr: int,
    environment: Dict[str, str],
    as_program: bool = False,
) -> int:
    """
    In the forked child: `allennlp.commands.main` with a clean slate; the exit code. With
    `as_program`, the child is the `allennlp` program as a user runs it: its log and SIGTERM
    handlers (as `allennlp/__main__.py` sets them), the plugin's terminal
    (`tft_allennlp.common.console` and `.progress`), and an uncaught error handed to
    `sys.excepthook`, as the interpreter does.
    """
    code = 1
    try:
        # GNU OpenMP's thread pool does not survive a fork: the child's first parallel kernel
        # would wait forever for the parent's threads. With one thread torch runs no parallel
        # region at all.
        torch.set_num_threads(1)
        os.dup2(stdout, 1)
        os.dup2(stderr, 2)
        sys.stdout = open(1, "w", buffering=1, closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        os.chdir(PROJECT_ROOT)
        os.environ.update(environment)
        logging.getLogger().handlers.clear()
        sys.modules["__main__"] = types.ModuleType("__main__")
        sys.argv = ["allennlp", *arguments]
        if as_program:
            logging.basicConfig(format=LOG_FORMAT, level=logging.INFO, force=True)
            install_sigterm_handler()
            console.install()
            progress.install()
        cached_transformers._clear_caches()
        main(prog="allennlp")
        code = 0
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
        if isinstance(exit.code, str):  # as the interpreter prints it
            print(exit.code, file=sys.stderr)
    except BaseException:
        if as_program:
            sys.excepthook(*sys.exc_info())
        else:
            traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    return code
