"""
`make setup`'s installers side by side: `make setup INSTALLER=pip` and `INSTALLER=uv` (the lock's
own `uv==` pin, with `--compile-bytecode`, since pip compiles too) into a fresh venv, alternately,
without a cache (as CI installs), and the wall and CPU seconds of each.

    python benchmarks/setup_benchmark.py [--lock requirements.lock.txt] [--rounds 1]

Needs the package index (about 3 GB of wheels per install) and about 7 GB of free disk; each
venv is removed after its install.
"""

import argparse
import os
import pathlib
import resource
import shutil
import subprocess
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def install(installer: str, lock: pathlib.Path, scratch: pathlib.Path) -> tuple:
    """
    (wall seconds, CPU seconds) of `make setup INSTALLER=installer` of `lock` into a fresh venv,
    which is then removed. Fails if uv fell back to pip.
    """
    venv = scratch / f"venv-{installer}"
    command = ["make", "-s", "setup", f"VENV={venv}", f"LOCK={lock}", f"INSTALLER={installer}"]
    environment = {**os.environ, "PIP_NO_CACHE_DIR": "1", "UV_NO_CACHE": "1"}
    cpu, started = children_cpu(), time.monotonic()
    subprocess.run(command, check=True, env=environment, cwd=ROOT)
    wall, cpu = time.monotonic() - started, children_cpu() - cpu
    # Every pin but uv itself (pip installs it first) went in with `installer`.
    pins = [line.split("==")[0] for line in lock.read_text().splitlines() if "==" in line]
    pinned = {pin.lower().replace("-", "_") for pin in pins}
    for record in venv.glob("lib/python*/site-packages/*.dist-info/INSTALLER"):
        name = record.parent.name.split("-")[0].lower()
        if name in pinned - {"uv"}:
            assert record.read_text().strip() == installer, f"{installer} did not install {name}"
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
