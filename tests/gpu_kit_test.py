"""
The GPU device kit's parts that need no GPU (benchmarks/gpu/): the stand-in that replaces a
package the kit does not carry, and the kit's lists: against the Python 3.12 lock, and against
what AllenNLP and the plugin import when they start.
"""

import importlib.metadata
import os
import re
import subprocess
import sys

from packaging.requirements import Requirement

from tests import PROJECT_ROOT

KIT = PROJECT_ROOT / "benchmarks/gpu"
RUN = KIT / "run.sh"

USE_A_STAND_IN = """
import importlib.metadata, fakepkg
import fakepkg.cli.download
from fakepkg.cli.download import download
from fakepkg.language import Language

class Tokenizer(fakepkg.tokens.Doc):  # a base class, as at import time
    pass

def annotated(model: Language) -> None:
    pass

try:
    raise ValueError("not from the stand-in")
except (fakepkg.exceptions.ClientError, ValueError) as error:
    print("caught", type(error).__name__)
for use in (lambda: download("en"), lambda: fakepkg.load("en"), lambda: Tokenizer()):
    try:
        use()
    except ImportError as error:
        print(error)
try:
    importlib.metadata.version("fakepkg")
except importlib.metadata.PackageNotFoundError:
    print("no metadata")
print(fakepkg.cli.download.download is download, fakepkg.language.Language is Language)
"""


def test_a_stand_in_imports_and_fails_on_use_naming_its_package(tmp_path):
    (tmp_path / "tft_absent_package.py").write_text((KIT / "absent_package.py").read_text())
    (tmp_path / "fakepkg").mkdir()
    (tmp_path / "fakepkg/__init__.py").write_text(
        "from tft_absent_package import stand_in\n\nstand_in(__name__)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", USE_A_STAND_IN],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    suffix = "is a stand-in on this machine: benchmarks/gpu/run.sh does not carry fakepkg"
    assert result.stdout.splitlines() == [
        "caught ValueError",
        f"fakepkg.cli.download.download {suffix} (see benchmarks/gpu/absent.txt)",
        f"fakepkg.load {suffix} (see benchmarks/gpu/absent.txt)",
        f"fakepkg.tokens.Doc {suffix} (see benchmarks/gpu/absent.txt)",
        "no metadata",
        "True True",
    ]


def names(path):
    return [line.split("#")[0].strip() for line in path.read_text().splitlines()]


def test_every_carried_package_is_pinned_by_the_python_312_lock():
    lock = (PROJECT_ROOT / "requirements-py312.lock.txt").read_text().lower()
    pinned = {re.sub(r"[-_.]+", "-", line.split("==")[0]) for line in lock.splitlines()}
    carried = [name for name in names(KIT / "carried.txt") if name]
    assert {"allennlp", "transformers", "tokenizers", "pytest"} <= set(carried)
    for name in carried:
        assert re.sub(r"[-_.]+", "-", name.lower()) in pinned, name
    # The machine's torch and numpy are used, never shadowed.
    assert not {"torch", "numpy", "triton"} & set(carried)


def distribution(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def machine_packages():
    """torch with what it requires, as this environment installed it, and numpy."""
    found, todo = set(), ["torch"]
    while todo:
        name = distribution(todo.pop())
        if name not in found:
            try:
                requires = importlib.metadata.requires(name) or []
            except importlib.metadata.PackageNotFoundError:
                continue  # not for this platform
            found.add(name)
            for line in requires:
                requirement = Requirement(line)
                if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                    todo.append(requirement.name)
    return found | {"numpy"}


STARTS = """
import sitecustomize  # run.sh's start-up hook, which site imports (-S turns site off)
import sys
from allennlp.common.plugins import import_plugins
import allennlp.commands, tft_allennlp
import_plugins()
print(" ".join(sorted(
    name for name, module in sys.modules.items()
    if "." not in name and type(module).__name__ == "_StandInModule"
)))
"""


def test_allennlp_starts_on_the_kit_its_machine_and_a_stand_in_for_each_absent_package(tmp_path):
    """
    The GPU machine as run.sh makes it, from this environment's files: a folder with the
    distributions of carried.txt and the machine's (torch, what it requires, numpy), then the
    stand-ins that run.sh writes for absent.txt, then the repository; nothing else. AllenNLP's
    command line and the plugin start there, and every package of absent.txt is imported, as its
    stand-in: a package it imports that the kit neither carries nor stands in for fails the
    start, and a name of absent.txt that is no package it imports stays unused.
    """
    absent = [name for name in names(KIT / "absent.txt") if name]
    carried = [name for name in names(KIT / "carried.txt") if name]
    assert not {distribution(name) for name in absent} & {distribution(name) for name in carried}
    site, stand_ins = tmp_path / "site", tmp_path / "stand_ins"
    site.mkdir()
    for name in {distribution(name) for name in carried} | machine_packages():
        installed = importlib.metadata.distribution(name)
        for top in {path.parts[0] for path in installed.files or []} - {"..", "__pycache__"}:
            if not os.path.lexists(site / top):  # a namespace package: one link holds all
                (site / top).symlink_to(installed.locate_file(top))
    stand_ins.mkdir()
    (stand_ins / "tft_absent_package.py").write_text((KIT / "absent_package.py").read_text())
    hook = "import tft_allennlp_autoload\n"
    assert f"printf '{hook.strip()}\\n' > \"$stand_ins/sitecustomize.py\"" in RUN.read_text()
    (stand_ins / "sitecustomize.py").write_text(hook)
    assert "\nexport TFT_LAZY_IMPORTS=0\n" in RUN.read_text()
    for name in absent:
        (stand_ins / name).mkdir()
        (stand_ins / name / "__init__.py").write_text(
            "from tft_absent_package import stand_in\n\nstand_in(__name__)\n"
        )
    result = subprocess.run(
        [sys.executable, "-S", "-c", STARTS],  # -S: none of this environment's site-packages
        cwd=PROJECT_ROOT,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(map(str, (site, stand_ins, PROJECT_ROOT))),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TFT_LAZY_IMPORTS": "0",  # as run.sh sets it
        },
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == sorted(absent)
