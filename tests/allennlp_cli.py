"""
Runs `allennlp train` in a child process, as a user does, on a config written out as JSON: the
recovery and distributed tests need real processes (SIGKILL, gloo workers).
"""

import json
import os
import pathlib
import subprocess
import sys
from typing import Any, Callable, Dict, Optional

from allennlp.common import Params

from tests import PROJECT_ROOT


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
    command = [sys.executable, "-m", "allennlp", "train", str(config), "-s", str(serialization_dir)]
    command += ["--include-package", "tests.training.callbacks.sigkill"]
    command += ["--include-package", "tests.training.callbacks.record_batches", *flags]
    environment = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    return subprocess.run(
        command, cwd=PROJECT_ROOT, capture_output=True, text=True, env=environment
    )
