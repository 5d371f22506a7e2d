"""
A non-editable install: the plugin's wheel carries the configs and the aligner's scorers as
package data and the start-up hook that loads the plugin, and none of the experiment harness or
the research folder; the harness's wheel adds `tft-experiment` through its entry point; the
installed packages run from a directory outside the checkout that has no `.allennlp_plugins`.
(The slow check, a fresh venv installed with the documented command running the whole method,
was run by hand: docs/install.md.) And the editable install `make setup` does, whose venv runs
these tests.
"""

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile

from tests import PROJECT_ROOT
from tft_allennlp_autoload import HOOK


def test_the_wheel_carries_the_configs_and_works_outside_the_checkout(tmp_path):
    # Built from a copy of the sources, so that the build leaves nothing in the checkout: the
    # plugin's wheel, and the harness's (harness/), a package of its own.
    source = tmp_path / "source"
    shutil.copytree(
        PROJECT_ROOT,
        source,
        ignore=shutil.ignore_patterns("__pycache__", ".*", "runs", "*.egg-info"),
    )
    for folder in (source, source / "harness"):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--quiet",
                "--no-deps",
                "--no-build-isolation",
                "--disable-pip-version-check",
                "-w",
                str(tmp_path / "dist"),
                str(folder),
            ],
            check=True,
            capture_output=True,
        )
    (wheel,) = (tmp_path / "dist").glob("tft_allennlp-*.whl")
    (harness,) = (tmp_path / "dist").glob("tft_experiments-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    # The plugin's wheel carries no lab: no harness, no research specs, scripts or results.
    assert not [name for name in names if re.search(r"experiment|research|results/", name)]
    harness_names = set(zipfile.ZipFile(harness).namelist())
    assert "tft_experiments/commands/experiment.py" in harness_names
    assert "tft_experiments/specs/minilm_glue.jsonnet" in harness_names
    assert not [name for name in harness_names if name.startswith("tft_allennlp")]
    configs = {
        f"tft_allennlp/training_configs/{path.relative_to(PROJECT_ROOT / 'training_configs')}"
        for path in (PROJECT_ROOT / "training_configs").rglob("*.*sonnet")
    }
    assert configs and configs <= names
    start_up = {"tft_allennlp.pth", "tft_allennlp_autoload.py", "tft_allennlp_lazy/registry.py"}
    assert start_up | {"tft_host_patches/remote_code.py"} <= names
    # The learned aligner's scorers travel with it.
    scorers = {f"tft_allennlp/alignment/scorers/{name}.json" for name in ("lexical", "contextual")}
    assert scorers <= names
    # So do tft-show's style and script, which every page inlines.
    assert {"tft_allennlp/viewer/page.css", "tft_allennlp/viewer/page.js"} <= names
    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--disable-pip-version-check",
            "--target",
            str(site),
            str(wheel),
            str(harness),
        ],
        check=True,
        capture_output=True,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # The wheel's tft_allennlp.pth runs as site-packages' .pth files do (PYTHONPATH skips them).
    environment = {**os.environ, "PYTHONPATH": ""}
    allennlp = (
        f"import site, sys; site.addsitedir({str(site)!r}); sys.argv[0] = 'allennlp'; "
        "from allennlp.__main__ import run; run()"
    )
    help_text = subprocess.run(
        [sys.executable, "-c", allennlp, "tft-experiment", "--help"],
        cwd=elsewhere,
        env=environment,
        capture_output=True,
        text=True,
    )
    assert help_text.returncode == 0, help_text.stderr[-2000:]
    assert "--shard" in help_text.stdout
    configs = subprocess.run(
        [sys.executable, "-c", allennlp, "tft-configs"],
        cwd=elsewhere,
        env=environment,
        capture_output=True,
        text=True,
    )
    assert configs.stdout.strip() == str(site / "tft_allennlp" / "training_configs")
    assert configs.stderr == ""  # no plugin lines, no nltk download errors, no warnings
    switched_off = subprocess.run(
        [sys.executable, "-c", allennlp, "tft-configs"],
        cwd=elsewhere,
        env={**environment, "TFT_ALLENNLP_AUTOLOAD": "0"},
        capture_output=True,
        text=True,
    )
    assert switched_off.returncode == 2
    assert "invalid choice: 'tft-configs'" in switched_off.stderr
    assert "Load it with a line 'tft_allennlp' in ./.allennlp_plugins" in switched_off.stderr
    environment["PYTHONPATH"] = str(site)
    check = (
        "import os, tft_allennlp\n"
        "from allennlp.common import Params\n"
        "import tft_experiments\n"
        "from tft_experiments.spec import ExperimentSpec\n"
        "from tft_experiments.strategies.fine_tuning_strategy import CONFIGS_ROOT\n"
        f"assert tft_allennlp.__file__.startswith({str(site)!r}), tft_allennlp.__file__\n"
        f"assert tft_experiments.__file__.startswith({str(site)!r}), tft_experiments.__file__\n"
        "params = Params.from_file(os.path.join(CONFIGS_ROOT, 'glue/mrpc.jsonnet'))\n"
        "assert params['model']['type'] == 'tft_glue_classifier'\n"
        "spec = ExperimentSpec(output_dir='out', base_models={'b': 'm'}, tasks=['mrpc'],\n"
        "                      glue_dir='g',\n"
        "                      variants=['none', 'tft'], paraphrase_corpus='c')\n"
        "assert os.path.exists(next(spec.injection_runs()).config)\n"
        "assert os.path.exists(next(spec.glue_runs({})).config)\n"
        "print('installed package OK')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", check],
        cwd=elsewhere,
        env=environment,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "installed package OK" in result.stdout


def test_the_editable_install_has_the_start_up_hook_too(tmp_path):
    # An editable wheel leaves the hook out; `make setup` writes it, so that the venv's
    # `allennlp` loads the plugin quietly from any folder, as an installed wheel does.
    name, line = HOOK
    hook = os.path.join(sysconfig.get_paths()["purelib"], name)
    assert open(hook).read() == line
    allennlp = os.path.join(os.path.dirname(sys.executable), "allennlp")
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "TFT_VERBOSE", "ALLENNLP_LOG_LEVEL", "ALLENNLP_DEBUG")
    }
    result = subprocess.run(
        [allennlp, "tft-configs"], cwd=tmp_path, env=environment, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == str(PROJECT_ROOT / "tft_allennlp" / "training_configs")
    assert result.stderr == ""  # no plugin lines, no pkg_resources warning
