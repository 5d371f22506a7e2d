"""
`make setup`'s installers side by side: the lock installed with `--no-deps` into a fresh venv by
pip and by uv (the lock's own `uv==` pin, with `--compile-bytecode`, since pip compiles too),
alternately, without a cache (as CI installs), and the wall and CPU seconds of each install.

    python benchmarks/setup_benchmark.py [--lock requirements.lock.txt] [--rounds 1]

Needs the package index (about 3 GB of wheels per install) and about 7 GB of free disk; each
venv is removed after its install.
"""

import argparse
import os
import pathlib
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def install(installer: str, lock: pathlib.Path, scratch: pathlib.Path) -> tuple:
    """(wall seconds, CPU seconds) of one install of `lock` into a fresh venv by `installer`."""
    venv = scratch / f"venv-{installer}"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin/pip"), "install", "--quiet", "--disable-pip-version-check", "--no-deps"]
    environment = {**os.environ, "PIP_NO_CACHE_DIR": "1", "UV_NO_CACHE": "1"}
    if installer == "uv":
        # Installing uv itself is part of uv's time, as in `make setup`.
        (uv_pin,) = re.findall(r"^uv==\S+", lock.read_text(), re.MULTILINE)
        commands = [
            pip + [uv_pin],
            [
                str(venv / "bin/uv"),
                "pip",
                "install",
                "--quiet",
                "--python",
                str(venv / "bin/python"),
            ]
            + ["--no-deps", "--compile-bytecode", "-r", str(lock)],
        ]
    else:
        commands = [pip + ["-r", str(lock)]]
    cpu, started = children_cpu(), time.monotonic()
    for command in commands:
        subprocess.run(command, check=True, env=environment)
    wall, cpu = time.monotonic() - started, children_cpu() - cpu
    shutil.rmtree(venv)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lock", type=pathlib.Path, default=ROOT / "requirements.lock.txt")
    parser.add_argument("--rounds", type=int, default=1, help="pip then uv, this many times")
    args = parser.parse_args()
    times = {"pip": [], "uv": []}
    with tempfile.TemporaryDirectory() as scratch:
        for round_ in range(args.rounds):
            for installer in ("pip", "uv"):
                wall, cpu = install(installer, args.lock.resolve(), pathlib.Path(scratch))
                times[installer].append(wall)
                print(f"round {round_ + 1}: {installer:3s} {wall:6.0f} s wall, {cpu:6.0f} s CPU")
    pip, uv = sum(times["pip"]), sum(times["uv"])
    print(f"uv installs {args.lock.name} {pip / uv:.2f}x as fast as pip (wall, all rounds)")


if __name__ == "__main__":
    main()
