"""
The fault and bad-input campaign of `tests/fault_cases.py`, counted per command family:
clear errors / correct / tracebacks / silent (with hangs), and each case's outcome.

    python benchmarks/fault_campaign.py [--tree DIR] [--only FAMILY] [--json OUT]

`--tree` runs the cases against another checkout's library (e.g. a worktree of an older
commit), with this checkout's harness: its `tests/` helpers are copied there first.
"""

import argparse
import collections
import json
import os
import pathlib
import tempfile

from harness_tree import ROOT, enter_tree  # noqa: E402  (benchmarks/ is the script's folder)

HARNESS = [
    "tests/fault_cases.py",
    "tests/allennlp_cli.py",
    "tests/training/file_events.py",
    "tests/common/tar_members.py",
    "tests/training/callbacks/hold.py",
]
CATEGORIES = ["clear error", "correct", "traceback", "silent"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", default=ROOT)
    parser.add_argument("--only")
    parser.add_argument("--json")
    args = parser.parse_args()
    enter_tree(args.tree, HARNESS)
    import tft_allennlp  # noqa: F401  (registers the plugin, as `allennlp` does)
    from tests.fault_cases import CASES, make_artifacts, run_case
    from tests.tiny_bert import write_tiny_bert

    results = []
    with tempfile.TemporaryDirectory() as scratch:
        bert = write_tiny_bert(os.path.join(scratch, "bert"))
        artifacts = make_artifacts(pathlib.Path(scratch), bert)
        for index, case in enumerate(CASES):
            if args.only and case.family != args.only:
                continue
            try:
                outcome, printed = run_case(case, pathlib.Path(scratch) / f"case{index}", artifacts)
                last_line = printed.last_line
            except Exception as error:  # a case whose set-up or check needs this tree's library
                outcome, last_line = "not run", f"{type(error).__name__}: {error}"
            results.append((case.family, case.name, case.expect, outcome, last_line))
            print(f"{case.family:20} {outcome:12} {case.name}: {last_line[:150]}", flush=True)
    # "not run": a case of this harness that an older tree cannot run (its set-up or check uses
    # library code that the tree does not have); listed only when there is one.
    categories = CATEGORIES + (["not run"] if any(r[3] == "not run" for r in results) else [])
    counts = collections.defaultdict(collections.Counter)
    for family, _, _, outcome, _ in results:
        counts[family][outcome] += 1
    print("\n| family | cases | " + " | ".join(categories) + " |")
    print("|---|---:|" + "---:|" * len(categories))
    for family, counter in counts.items():
        cells = " | ".join(str(counter[c]) for c in categories)
        print(f"| {family} | {sum(counter.values())} | {cells} |")
    total = collections.Counter(outcome for _, _, _, outcome, _ in results)
    print(f"| all | {len(results)} | " + " | ".join(str(total[c]) for c in categories) + " |")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
