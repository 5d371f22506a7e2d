"""
How long the `allennlp` command takes to start, against importing what it cannot do without,
side by side in one run:

    python benchmarks/startup_benchmark.py [--archive runs/demo/glue-base/model.tar.gz]
        [--rounds 5] [--threads 1]

Each side is a fresh process, run in a rotating order for `--rounds` rounds after one untimed
warm-up round (bytecode written, files in the page cache), its wall time measured around the
whole process:

- `import torch, transformers`: `python -c "import torch, transformers"`, the floor;
- `allennlp --help`, and `allennlp predict ARCHIVE PAIR` of one sentence pair (loading the
  archive, the one prediction, its line on the output);
- both again with `TFT_LAZY_IMPORTS=0`: AllenNLP's own start-up, which imports all of `allennlp`
  and allennlp-models before any command (`tft_allennlp_lazy` says what the plugin defers).

The table gives each side's median and its ratio to the floor's median, and the median of the
per-round ratios. The predictions of the two predict sides must be equal. The archive defaults
to the GLUE run of `make demo` (MiniLM on MRPC); any GLUE pair-task archive of the plugin works.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PAIR = {"sentence1": "The cat sat on the mat.", "sentence2": "A cat was sitting on the mat."}


def sides(archive: str, pair: str) -> Dict[str, List[str]]:
    predict = [str(BIN / "allennlp"), "predict", archive, pair]
    return {
        "import torch, transformers": [sys.executable, "-c", "import torch, transformers"],
        "allennlp --help": [str(BIN / "allennlp"), "--help"],
        "allennlp predict (1 pair)": predict,
        "allennlp --help, eager": [str(BIN / "allennlp"), "--help"],
        "allennlp predict (1 pair), eager": predict,
    }


def environment(threads: int, eager: bool) -> Dict[str, str]:
    env = {
        **os.environ,
        "OMP_NUM_THREADS": str(threads),
        "MKL_NUM_THREADS": str(threads),
        "TOKENIZERS_PARALLELISM": "false",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TFT_LAZY_IMPORTS": "0" if eager else "1",
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as users run it: with bytecode written once
    return env


def run_side(command: List[str], env: Dict[str, str], output: str) -> float:
    started = time.monotonic()
    with open(output, "w") as handle:
        subprocess.run(
            command, check=True, env=env, cwd=tempfile.gettempdir(), stdout=handle,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--archive", default=str(ROOT / "runs/demo/glue-base/model.tar.gz"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    if not os.path.isfile(args.archive):
        sys.exit(f"no archive at {args.archive}: run `make demo`, or pass --archive")
    scratch = tempfile.mkdtemp(prefix="startup-benchmark-")
    pair = os.path.join(scratch, "pair.jsonl")
    Path(pair).write_text(json.dumps(PAIR) + "\n")
    commands = sides(os.path.abspath(args.archive), pair)
    names = list(commands)
    times: Dict[str, List[float]] = {name: [] for name in names}
    outputs: Dict[str, str] = {}
    for round_number in range(args.rounds + 1):
        order = names[round_number % len(names) :] + names[: round_number % len(names)]
        for name in order:
            output = os.path.join(scratch, f"{names.index(name)}.out")
            seconds = run_side(commands[name], environment(args.threads, "eager" in name), output)
            outputs[name] = Path(output).read_text()
            if round_number > 0:  # round 0 warms up
                times[name].append(seconds)
        print(f"round {round_number}{' (warm-up)' if round_number == 0 else ''}", flush=True)
    lazy, eager = outputs["allennlp predict (1 pair)"], outputs["allennlp predict (1 pair), eager"]
    assert lazy == eager and lazy.strip(), (lazy, eager)
    floor = times[names[0]]
    print(f"\n{args.rounds} rounds, {args.threads} thread(s), archive {args.archive}\n")
    print("| side | median s | ratio of medians | median of per-round ratios | rounds s |")
    print("|---|---:|---:|---:|---|")
    for name in names:
        ratios = [t / f for t, f in zip(times[name], floor)]
        print(
            f"| {name} | {statistics.median(times[name]):.2f} | "
            f"{statistics.median(times[name]) / statistics.median(floor):.2f} | "
            f"{statistics.median(ratios):.2f} | {' '.join(f'{t:.2f}' for t in times[name])} |"
        )
    print(f"\nthe prediction (equal on both predict sides): {lazy.strip()}")


if __name__ == "__main__":
    main()
