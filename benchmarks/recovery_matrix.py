"""
The kill-at-every-file-event matrix of `tests/training/recovery_test.py`, with its figures: for
each config and each file event K of an uninterrupted run, the run is killed right after event K
and recovered with `--recover`, and the largest absolute differences of the recovered run's
metrics and weights (`best.th` and the archived weights) from the uninterrupted run's are
printed, or how the recovery failed.

    python benchmarks/recovery_matrix.py [--tree DIR] [--only glue|injection]

`--tree` runs it against another checkout's library (e.g. an older commit's), with this
checkout's harness copied there first.
"""

import argparse
import os
import pathlib
import shutil
import tempfile
import time

from harness_tree import ROOT, enter_tree  # noqa: E402  (benchmarks/ is the script's folder)

HARNESS = [
    "tests/allennlp_cli.py",
    "tests/training/file_events.py",
    "tests/training/recovery_test.py",
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", default=ROOT)
    parser.add_argument("--only")
    args = parser.parse_args()
    enter_tree(args.tree, HARNESS)
    from tests import FIXTURES_ROOT
    from tests.allennlp_cli import write_config
    from tests.tiny_bert import write_tiny_bert
    from tests.training.file_events import events_environment, read_events, watching_file_events
    from tests.training.recovery_test import AT_ONCE, RUNS, differences, train

    with tempfile.TemporaryDirectory() as scratch:
        scratch = pathlib.Path(scratch)
        os.environ["TFT_MODEL"] = write_tiny_bert(str(scratch / "bert"))
        os.environ["GLUE_DIR"] = str(FIXTURES_ROOT / "glue")
        os.environ["TFT_PARAPHRASE_CORPUS"] = str(FIXTURES_ROOT / "paraphrase/aligned.jsonl")
        for name in sorted(RUNS):
            if args.only and name != args.only:
                continue
            started = time.time()
            config = write_config(scratch / f"{name}.json", *RUNS[name])
            expected = scratch / f"{name}_uninterrupted"
            watched = events_environment(expected, scratch / f"{name}.log")
            with watching_file_events():
                (result,) = train(config, [expected], environments=[watched])
            assert result.returncode == 0, result.stderr[-3000:]
            events = read_events(scratch / f"{name}.log")
            print(f"\n{name}: {len(events)} file events\n")
            print("| K | event | metrics max abs diff | weights max abs diff |")
            print("|---:|---|---:|---:|")
            exact = 0
            for start in range(0, len(events), AT_ONCE):
                batch = events[start : start + AT_ONCE]
                directories = [scratch / f"{name}_killed_{number}" for number, _, _ in batch]
                environments = [
                    events_environment(d, scratch / f"{name}_{n}.log", kill_at=n)
                    for d, (n, _, _) in zip(directories, batch)
                ]
                with watching_file_events():
                    killed = train(config, directories, environments=environments)
                recovered = train(config, directories, "--recover")
                for (number, kind, path), directory, kill, recovery in zip(
                    batch, directories, killed, recovered
                ):
                    if kill.returncode != -9:
                        cells = f"not killed (exit {kill.returncode}) | "
                    elif recovery.returncode != 0:
                        last = [line for line in recovery.stderr.splitlines() if line.strip()]
                        cells = f"--recover failed: {last[-1][:90] if last else ''} | "
                    else:
                        try:
                            metrics, weights = differences(expected, directory)
                            cells = f"{metrics:.3g} | {weights:.3g}"
                            exact += metrics == 0 and weights == 0
                        except Exception as error:  # a missing file of the recovered run
                            cells = f"{type(error).__name__}: {str(error)[:80]} | "
                    print(f"| {number} | {kind} `{path}` | {cells} |", flush=True)
                    shutil.rmtree(directory, ignore_errors=True)
            minutes = (time.time() - started) / 60
            print(f"\n{name}: {exact} of {len(events)} kills recovered exactly ({minutes:.1f} min)")


if __name__ == "__main__":
    main()
