"""
The GPU device kit's parts that need no GPU (benchmarks/gpu/): the stand-in that replaces a
package the kit does not carry, and the kit's lists against the Python 3.12 lock.
"""

import re
import subprocess
import sys

from tests import PROJECT_ROOT

KIT = PROJECT_ROOT / "benchmarks/gpu"

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


def test_the_absent_packages_are_import_names_the_kit_does_not_carry():
    absent = [name for name in names(KIT / "absent.txt") if name]
    assert absent == ["spacy", "scipy", "sklearn", "boto3", "botocore", "h5py", "torchvision"]
    assert not set(absent) & {name.lower() for name in names(KIT / "carried.txt")}
