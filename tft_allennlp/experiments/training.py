"""
How one run of an experiment grid trains: `allennlp train` of its config in a new interpreter,
its output in a log, and whether a killed attempt can go on from its last checkpoint.
"""

import glob
import json
import os
import subprocess
import sys
from typing import IO, Any, Dict, List

from tft_allennlp.experiments.reuse import rendered_config
from tft_allennlp.experiments.runs import Training

LOG = "train.log"


def resumable(directory: str, training: Training) -> bool:
    """
    Whether the run directory `directory` holds a checkpoint (`training_state_e*.th`) of a
    training whose `config.json` is the one `training` writes now: an attempt that was killed
    before it finished, which `--recover` continues.
    """
    config_path = os.path.join(directory, "config.json")
    if not glob.glob(os.path.join(directory, "training_state_e*.th")):
        return False
    if not os.path.exists(config_path):
        return False
    with open(config_path) as handle:
        written = json.load(handle)
    return written == json.loads(json.dumps(rendered_config(*training)))


def allennlp_train(
    config: str,
    directory: str,
    overrides: Dict[str, Any],
    environment: Dict[str, str],
    resume: bool = False,
) -> bool:
    """
    `allennlp train CONFIG -s DIRECTORY -f -o OVERRIDES` in a child process (with `resume`,
    `--recover` instead of `-f`: on from the checkpoint in DIRECTORY), its output in
    `DIRECTORY.log` while it runs and moved to `DIRECTORY/train.log` after (a resumed run's
    after the log of the attempts before it); True on success.
    """
    log_path = directory.rstrip("/") + ".log"
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    if resume:
        _put_earlier_log_first(os.path.join(directory, LOG), log_path)
    start = "--recover" if resume else "-f"
    arguments = ["train", config, "-s", directory, start, "--file-friendly-logging"]
    arguments += ["-o", json.dumps(overrides), "--include-package", "tft_allennlp"]
    with open(log_path, "a" if resume else "w") as log:
        returncode = run_allennlp(arguments, log, environment)
    if os.path.isdir(directory):
        os.replace(log_path, os.path.join(directory, LOG))
    return returncode == 0 and os.path.exists(os.path.join(directory, "metrics.json"))


def _put_earlier_log_first(moved: str, log_path: str) -> None:
    """
    Before a resumed attempt: the log of the attempts before it (`moved`, in the run directory)
    goes to the start of `log_path`, after which an attempt whose harness was killed left its
    own log.
    """
    if not os.path.exists(moved):
        return
    with open(moved) as earlier:
        text = earlier.read()
    if os.path.exists(log_path):
        with open(log_path) as later:
            text += later.read()
    with open(log_path, "w") as log:
        log.write(text)
    os.remove(moved)


def run_allennlp(arguments: List[str], log: IO[str], environment: Dict[str, str]) -> int:
    """
    `allennlp ARGUMENTS` in a new interpreter, with `environment` added to this process's, its
    output and errors written to `log`; the exit code. Every run gets a fresh process, so that
    no state (a loaded model, a CUDA context, the registry of a config's `--include-package`)
    carries over from one run to the next.
    """
    command = [sys.executable, "-m", "allennlp", *arguments]
    return subprocess.run(
        command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **environment}
    ).returncode
