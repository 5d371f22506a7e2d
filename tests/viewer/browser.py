"""
A real headless browser for the tests: Chromium (Debian's `chromium` package; `make test` installs
it), driven by its command line: `--dump-dom` gives the page as the browser left it after its
script ran (the page's `#self-check` writes what it measured into the DOM), `--screenshot` a
PNG, and `--enable-logging=stderr` every console message (`:CONSOLE` lines). No driver library.
"""

import json
import os
import shutil
import subprocess
import tempfile
from typing import Any, Dict, List, Optional, Tuple

import pytest

from tests.viewer import page_elements

NAMES = ("chromium", "chromium-browser", "google-chrome")


def chromium() -> str:
    """The browser's executable; a failure where none is installed (`make test` installs it)."""
    found: Optional[str] = next(filter(None, map(shutil.which, NAMES)), None)
    if found is None:
        pytest.fail("no Chromium to render the page in: apt-get install chromium (or make test)")
    return found


def run(*arguments: str, timeout: int = 90) -> subprocess.CompletedProcess:
    """Headless Chromium with `arguments`, a profile of its own, its console on stderr."""
    with tempfile.TemporaryDirectory() as profile:
        command = [
            chromium(),
            "--headless",
            "--no-sandbox",  # tests run as root in CI; the page is the test's own file
            "--disable-gpu",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            f"--user-data-dir={profile}",
            *arguments,
        ]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


def console(result: subprocess.CompletedProcess) -> List[str]:
    """The console messages (errors, warnings, logs) the page left."""
    return [line for line in result.stderr.splitlines() if ":CONSOLE" in line]


def self_check(page: str) -> Tuple[Dict[str, Any], List[str]]:
    """What the page's `#self-check` measured in the browser, and its console messages."""
    result = run("--window-size=1280,1000", "--dump-dom", f"file://{page}#self-check")
    assert result.returncode == 0, result.stderr[-2000:]
    bodies = [e for e in page_elements(result.stdout) if e.tag == "body"]
    assert bodies and "data-self-check" in bodies[0].attributes, result.stdout[-2000:]
    return json.loads(bodies[0].attributes["data-self-check"]), console(result)


def screenshot(page: str, png: str, width: int = 1280, height: int = 1000) -> List[str]:
    """Saves the page's top as `png`; its console messages."""
    result = run(f"--window-size={width},{height}", f"--screenshot={png}", f"file://{page}")
    assert result.returncode == 0 and os.path.isfile(png), result.stderr[-2000:]
    return console(result)
