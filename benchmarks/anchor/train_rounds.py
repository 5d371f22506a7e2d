"""
The anchor benchmark's `train` mode: the sides, each in a fresh process, alternating in a
rotating order for `--rounds` rounds; a table of every run, then one of the medians and the
ratios to the `Trainer`.
"""

import json
import os
import statistics
import sys
from typing import Dict

from anchor.processes import ENVIRONMENT, SCRIPT, run_child


def train_main(args) -> None:
    sides = {"trainer": "HF Trainer", "plugin": "allennlp train"}
    if args.baseline_tree:
        sides["baseline"] = (
            f"allennlp train ({os.path.basename(os.path.abspath(args.baseline_tree))})"
        )
    results: Dict[str, list] = {side: [] for side in sides}
    scores: Dict[str, dict] = {}
    print(
        f"{args.task.upper()} {args.train_size} examples, {args.epochs} epoch(s), batch 32, "
        f"lr {args.lr}, {args.threads} threads, seed {args.seed}; plugin overrides "
        f"{args.overrides}; Trainer options {args.trainer_options}, attention "
        f"{args.trainer_attention or 'default'}; load average at start "
        f"{os.getloadavg()[0]:.1f}"
    )
    print(
        "| round | side | seconds | examples/s | peak RSS (MB) | load |\n|---|---|---|---|---|---|"
    )
    names = list(sides)
    for round_number in range(1, args.rounds + 1):
        shift = (round_number - 1) % len(names)
        for side in names[shift:] + names[:shift]:
            passed = [*sys.argv[1:], "--side", side]
            if round_number == 1:
                passed.append("--score")
            output, _ = run_child([sys.executable, SCRIPT, *passed], ENVIRONMENT)
            result = json.loads(output.split("RESULT", 1)[1])
            results[side].append(result)
            if "dev" in result:
                scores[side] = result["dev"]
            print(
                f"| {round_number} | {sides[side]} | {result['seconds']:.1f} | "
                f"{result['examples_per_second']:.1f} | {result['peak_rss_mb']:.0f} | "
                f"{os.getloadavg()[0]:.1f} |",
                flush=True,
            )
    print("\n| side | median examples/s | median peak RSS (MB) | dev |\n|---|---|---|---|")
    medians = {}
    for side, rs in results.items():
        medians[side] = statistics.median(r["examples_per_second"] for r in rs)
        rss = statistics.median(r["peak_rss_mb"] for r in rs)
        shown = ", ".join(f"{k} {100 * v:.1f}" for k, v in scores.get(side, {}).items())
        print(f"| {sides[side]} | {medians[side]:.1f} | {rss:.0f} | {shown} |")
    print(f"\nplugin / Trainer throughput (medians): {medians['plugin'] / medians['trainer']:.2f}")
    if "baseline" in medians:
        print(f"baseline / Trainer: {medians['baseline'] / medians['trainer']:.2f}")
    per_round = [
        p["examples_per_second"] / t["examples_per_second"]
        for p, t in zip(results["plugin"], results["trainer"])
    ]
    print("plugin / Trainer per round: " + " ".join(f"{r:.2f}" for r in per_round))
    rss_ratio = [
        p["peak_rss_mb"] / t["peak_rss_mb"] for p, t in zip(results["plugin"], results["trainer"])
    ]
    print("plugin / Trainer peak RSS per round: " + " ".join(f"{r:.3f}" for r in rss_ratio))
