"""
Two `allennlp train` on one serialization directory, started at the same instant, N times: the
race that the run's lock (`tft_allennlp.common.folder_lock`) settles. Each trial forks both
commands (the fixtures' MRPC config on the tiny BERT as the recovery tests train it, three
epochs, about a second; the two with different seeds, so that the directory tells whose files it
holds), lets them go together, and sorts what came out:

- both exit 0: the bug, two runs wrote one directory;
- one refused cleanly: one exits 1 with one line, having touched nothing, and the other exits 0
  with a whole run of its own (its `config.json`, the `metrics.json` of its seed, bit for bit
  those of a run alone, its archive, no lock left); the line is the lock's while the other
  trains, or says the directory holds a run where the other (about a second of training) had
  already ended;
- other: anything else, each described.

    python benchmarks/run_folder_race.py [--trials 20] [--unlocked]

`--unlocked` takes the lock's patch out of `allennlp train`, as before it.
"""

import argparse
import collections
import json
import os
import pathlib
import re
import shutil
import sys
import tempfile
from typing import Dict, List, Tuple

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from tests import FIXTURES_ROOT, PROJECT_ROOT  # noqa: E402
from tests.allennlp_cli import forked_allennlp, write_config  # noqa: E402
from tests.tiny_bert import write_tiny_bert  # noqa: E402
from tests.training.recovery_test import RUNS  # noqa: E402

SEEDS = (1, 2)
# Metrics that differ between any two runs.
UNREPRODUCIBLE = ("training_duration", "memory_MB", "epoch_time", "start_epoch")
OUTCOMES = ("both exit 0", "one refused cleanly", "other")
# The one line of a clean refusal: by the lock, while the other run trains; or, where the other
# run had already ended when this one started (a tiny run takes about a second), as a
# directory that holds a run.
REFUSALS = {
    "by the lock": "error: {directory}: in use by allennlp train, process ",
    "a finished run": "error: Serialization directory {directory} already holds a run",
}


def seeded(seed: int) -> List[str]:
    overrides = {"random_seed": seed, "numpy_seed": seed, "pytorch_seed": seed}
    return ["-o", json.dumps(overrides)]


def metrics(directory: pathlib.Path) -> Dict[str, object]:
    """`metrics.json` of a run, less its timings."""
    values = json.loads((directory / "metrics.json").read_text())
    return {k: v for k, v in values.items() if not any(part in k for part in UNREPRODUCIBLE)}


def whole_run_of(directory: pathlib.Path, seed: int, expected: Dict[int, Dict[str, object]]) -> str:
    """What is wrong with `directory` as the run of `seed` alone ("" if nothing)."""
    names = set(os.listdir(directory))
    missing = {"config.json", "metrics.json", "model.tar.gz", "best.th"} - names
    if missing:
        return f"missing {', '.join(sorted(missing))}"
    if any(name.startswith(".tft-lock") for name in names):
        return "a lock file left"
    config_seed = json.loads((directory / "config.json").read_text()).get("random_seed")
    if config_seed != seed:
        return f"config.json of seed {config_seed}"
    if metrics(directory) != expected[seed]:
        owners = [other for other, values in expected.items() if values == metrics(directory)]
        return f"metrics.json of seed {owners[0] if owners else '?'}"
    return ""


def trial(
    config: pathlib.Path, directory: pathlib.Path, expected: Dict[int, Dict[str, object]]
) -> Tuple[str, str]:
    """One race: (its outcome, a description)."""
    commands = [["train", str(config), "-s", str(directory), *seeded(seed)] for seed in SEEDS]
    results = forked_allennlp(*commands, together=True, as_program=True)
    codes = [result.returncode for result in results]
    if codes == [0, 0]:
        state = [whole_run_of(directory, seed, expected) or "whole" for seed in SEEDS]
        return OUTCOMES[0], f"as seed {SEEDS[0]}: {state[0]}; as seed {SEEDS[1]}: {state[1]}"
    if sorted(codes) == [0, 1]:
        winner = codes.index(0)
        refused = results[1 - winner]
        lines = [line for line in refused.stderr.splitlines() if line.strip()]
        last = lines[-1] if lines else ""
        forget_traceback_log(last)
        problem = whole_run_of(directory, SEEDS[winner], expected)
        for kind, start in REFUSALS.items():
            if len(lines) == 1 and last.startswith(start.format(directory=directory)):
                if not problem:
                    return OUTCOMES[1], f"{kind}: {last}"
        return OUTCOMES[2], f"exit {codes}: {problem or 'whole run'}; refusal: {last[-200:]}"
    tails = [result.stderr.strip().splitlines()[-1:] for result in results]
    for tail in tails:
        forget_traceback_log(tail[0] if tail else "")
    return OUTCOMES[2], f"exit {codes}: {tails}"


def forget_traceback_log(line: str) -> None:
    """Removes the temporary log that an error's line names (`(traceback: PATH)`)."""
    where = re.search(r" \(traceback: (\S+)\)$", line)
    if where and "allennlp-error-" in where.group(1):
        pathlib.Path(PROJECT_ROOT, where.group(1)).unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--unlocked", action="store_true")
    args = parser.parse_args()
    import allennlp.commands.train as train_command

    import tft_allennlp  # noqa: F401  (the plugin's patches, as `allennlp` loads them)

    if args.unlocked:
        train_command.train_model = train_command.train_model.__wrapped__  # type: ignore
    with tempfile.TemporaryDirectory() as scratch:
        root = pathlib.Path(scratch)
        os.environ["TFT_MODEL"] = write_tiny_bert(str(root / "bert"))
        os.environ["GLUE_DIR"] = str(FIXTURES_ROOT / "glue")
        config = write_config(root / "mrpc.json", *RUNS["glue"])
        # Each seed's run alone: what the race's survivor must hold.
        alone = forked_allennlp(
            *(["train", str(config), "-s", str(root / f"alone{s}"), *seeded(s)] for s in SEEDS)
        )
        assert all(result.returncode == 0 for result in alone), alone[0].stderr[-2000:]
        expected = {seed: metrics(root / f"alone{seed}") for seed in SEEDS}
        assert expected[SEEDS[0]] != expected[SEEDS[1]]
        counts: collections.Counter = collections.Counter()
        for number in range(1, args.trials + 1):
            directory = root / f"race{number}"
            outcome, description = trial(config, directory, expected)
            counts[outcome] += 1
            if outcome == OUTCOMES[1]:
                counts[description.split(":")[0]] += 1
            print(f"trial {number}: {outcome}: {description}", flush=True)
            shutil.rmtree(directory, ignore_errors=True)
    lock = "without the lock" if args.unlocked else "with the lock"
    print(f"\nTwo `allennlp train` on one directory at the same instant, {lock}:\n")
    print("| outcome | trials |")
    print("|---|---:|")
    for outcome in OUTCOMES:
        print(f"| {outcome} | {counts[outcome]} / {args.trials} |")
        if outcome == OUTCOMES[1]:
            for kind in REFUSALS:
                print(f"| - {kind} | {counts[kind]} |")


if __name__ == "__main__":
    main()
