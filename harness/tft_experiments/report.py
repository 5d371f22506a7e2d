"""
The experiment's outputs from the runs' metrics: a tidy CSV (one row per run and metric), a
markdown table in the paper's layout (mean +- std over seeds, gain over the base model without
injection, best of each column in bold), the recipe sweep's table and PNG plots of score vs
training size.
"""

import csv
import os
import statistics
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from tft_allennlp.common.glue_tasks import GLUE_TASKS
from tft_allennlp.common.sentence_tasks import SentenceTask

KEYS = ("base", "variant", "strategy", "recipe", "task", "train_size")
CROSS = "cross"
# A run's trained parameters (`tft_parameter_counts`), reported where a run wrote them.
TRAINABLE = "trainable_parameters"


def _with_strategy(rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Rows without a strategy (written before strategies existed) are cross-encoder runs."""
    return [{"strategy": CROSS, **row} for row in rows]


def write_csv(
    rows: List[Dict[str, Any]], path: str, tasks: Mapping[str, SentenceTask] = GLUE_TASKS
) -> None:
    """
    Tidy: one line per run and metric; `strategy` is the last column. `tasks`: the grid's tasks
    by name (its custom ones too, `ExperimentSpec.task_table`), as for every report here.
    """
    keys = [key for key in KEYS if key != "strategy"]
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*keys, "candidate", "seed", "metric", "value", "directory", "strategy"])
        for row in _with_strategy(rows):
            for metric in tasks[row["task"]].metrics + ("combined_score", TRAINABLE):
                if metric in row:
                    coordinates = [*(row[key] for key in keys), row["candidate"], row["seed"]]
                    writer.writerow(
                        [*coordinates, metric, row[metric], row["directory"], row["strategy"]]
                    )


def summarize(
    rows: List[Dict[str, Any]], tasks: Mapping[str, SentenceTask] = GLUE_TASKS
) -> Dict[Tuple, Dict[str, List[float]]]:
    """(base, variant, strategy, recipe, task, train_size) -> metric -> values over seeds (%)."""
    groups: Dict[Tuple, Dict[str, List[float]]] = {}
    for row in _with_strategy(rows):
        values = groups.setdefault(tuple(row[key] for key in KEYS), {})
        for metric in tasks[row["task"]].metrics:
            values.setdefault(metric, []).append(100 * row[metric])
    return groups


def _mean_std(values: Sequence[float]) -> Tuple[float, float]:
    return statistics.mean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def _size_order(size: str) -> float:
    return float("inf") if size == "all" else float(size)


def markdown_table(
    rows: List[Dict[str, Any]],
    tasks: Mapping[str, SentenceTask] = GLUE_TASKS,
    tuning: str = "the sweep on the base model",
    per_variant: bool = False,
) -> str:
    """
    One table per base model and recipe: a row per training size, strategy and variant (the
    strategy column only where a strategy other than `cross` ran), a column per task metric;
    cells are `mean +- std (gain)` over seeds, the gain being over variant "none" of the same
    strategy. Every strategy ran on the same seeds and subsamples, so rows compare directly.
    The recipes a tuned recipe stands for are listed, said to be chosen by `tuning`, each
    variant's and strategy's own with `per_variant`.
    """
    rows = _with_strategy(rows)
    groups = summarize(rows, tasks)
    strategies = list(dict.fromkeys(row["strategy"] for row in rows))
    with_strategy = strategies != [CROSS]
    seeds = sorted({row["seed"] for row in rows})
    names = sorted({row["task"] for row in rows})
    columns = [(name, metric) for name in names for metric in tasks[name].metrics]
    variants = list(dict.fromkeys(row["variant"] for row in rows))
    lines_of = [(strategy, variant) for strategy in strategies for variant in variants]
    sizes = sorted({row["train_size"] for row in rows}, key=_size_order)
    trainable: Dict[Tuple, List[int]] = {}
    for row in rows:
        if TRAINABLE in row:
            line = (row["base"], row["variant"], row["strategy"], row["recipe"], row["train_size"])
            trainable.setdefault(line, []).append(row[TRAINABLE])
    sections = []
    for base in dict.fromkeys(row["base"] for row in rows):
        for recipe in dict.fromkeys(row["recipe"] for row in rows):
            header = (
                "| train size | "
                + ("strategy | " if with_strategy else "")
                + "variant | "
                + " | ".join(
                    f"{name.upper()} {tasks[name].metric_name(metric)}" for name, metric in columns
                )
                + (" | trained parameters" if trainable else "")
                + " |"
            )
            lines = [
                f"### {base}, recipe `{recipe}`",
                "",
                header,
                "|" + "---|" * (len(columns) + 2 + with_strategy + bool(trainable)),
            ]
            for size in sizes:
                best = {}
                for column in columns:
                    means = [
                        statistics.mean(groups[key][column[1]])
                        for key in ((base, v, s, recipe, column[0], size) for s, v in lines_of)
                        if key in groups and column[1] in groups[key]
                    ]
                    # Bold needs a comparison: a lone finished variant is not "best".
                    best[column] = max(means) if len(means) > 1 else None
                for strategy, variant in lines_of:
                    ran = any((base, variant, strategy, recipe, t, size) in groups for t in names)
                    if with_strategy and not ran:
                        continue  # e.g. a Siamese strategy where only single-sentence tasks ran
                    cells = []
                    for task, metric in columns:
                        key = (base, variant, strategy, recipe, task, size)
                        values = groups.get(key, {}).get(metric)
                        if not values:
                            cells.append("")
                            continue
                        mean, std = _mean_std(values)
                        cell = f"{mean:.1f} ± {std:.1f}"
                        if len(values) < len(seeds):  # a grid stopped or failed part-way
                            cell += f" [n={len(values)}]"
                        reference = groups.get(
                            (base, "none", strategy, recipe, task, size), {}
                        ).get(metric)
                        if variant != "none" and reference:
                            cell += f" ({mean - statistics.mean(reference):+.1f})"
                        if mean == best[(task, metric)]:
                            cell = f"**{cell}**"
                        cells.append(cell)
                    if trainable:
                        counts = trainable.get((base, variant, strategy, recipe, size), [])
                        low, high = (min(counts), max(counts)) if counts else (0, 0)
                        cells.append(
                            "" if not counts else f"{low:,}" + (f"-{high:,}" if high > low else "")
                        )
                    label = f"{strategy} | {variant}" if with_strategy else variant
                    lines.append(f"| {size} | {label} | " + " | ".join(cells) + " |")
            lines += [
                "",
                f"Dev scores (%), mean ± std over seeds {seeds} ([n=k]: over the k of them that "
                "finished); (+x): gain over `none`, the same base fine-tuned without "
                "injection"
                + (" with the same strategy" if with_strategy else "")
                + "; best of each size in bold.",
            ]
            chosen = {
                (f"{_runs_label(row, with_strategy)} " if per_variant else "")
                + f"{row['task'].upper()} n={row['train_size']}: `{row['candidate']}`": None
                for row in rows
                if (row["base"], row["recipe"]) == (base, recipe) and row["candidate"] != recipe
            }
            if chosen:
                lines.append(f"Recipe chosen by {tuning}: " + "; ".join(chosen) + ".")
            sections.append("\n".join(lines))
    return "\n\n".join(sections) + "\n"


def sweep_table(
    rows: List[Dict[str, Any]],
    selection: Dict[str, str],
    tasks: Mapping[str, SentenceTask] = GLUE_TASKS,
    held_out: Optional[float] = None,
) -> str:
    """
    The recipe sweep: a row per candidate recipe, a column per base, task and training size
    (and variant and strategy, where the sweep ran several); cells are the mean score that
    picks the tuned recipe (`selection`: task -> metric), on the dev set or, with `held_out`,
    on that fraction of the training data held out of training; the chosen candidate in bold.
    """
    per_variant = len({(row["variant"], row.get("strategy", CROSS)) for row in rows}) > 1
    with_strategy = len({row.get("strategy", CROSS) for row in rows}) > 1
    columns = list(
        dict.fromkeys(
            (row["base"], _runs_label(row, with_strategy), row["task"], row["train_size"])
            for row in rows
        )
    )
    candidates = list(dict.fromkeys(row["candidate"] for row in rows))
    scores: Dict[Tuple, List[float]] = {}
    for row in rows:
        column = (row["base"], _runs_label(row, with_strategy), row["task"], row["train_size"])
        scores.setdefault((row["candidate"], *column), []).append(100 * row[selection[row["task"]]])
    header = (
        "| recipe | "
        + " | ".join(
            f"{base}{' ' + label if per_variant else ''} {task.upper()} n={size} "
            f"{tasks[task].metric_name(selection[task])}"
            for base, label, task, size in columns
        )
        + " |"
    )
    lines = [
        "### Recipe sweep ("
        + ("each variant on its own" if per_variant else "base models without injection")
        + ")",
        "",
        header,
        "|" + "---|" * (len(columns) + 1),
    ]
    best = {
        column: max(
            (
                statistics.mean(scores[(candidate, *column)])
                for candidate in candidates
                if (candidate, *column) in scores
            ),
        )
        for column in columns
    }
    for candidate in candidates:
        cells = []
        for column in columns:
            values = scores.get((candidate, *column))
            cell = "" if not values else f"{statistics.mean(values):.1f}"
            cells.append(
                f"**{cell}**" if values and statistics.mean(values) == best[column] else cell
            )
        lines.append(f"| `{candidate}` | " + " | ".join(cells) + " |")
    seeds = sorted({row["seed"] for row in rows})
    scored_on = (
        "Dev score (%)"
        if held_out is None
        else f"Score (%) on {held_out:g} of the training data, held out of training,"
    )
    lines += [
        "",
        f"{scored_on} that selects the recipe, mean over seeds {seeds}; the tuned recipe in bold.",
    ]
    return "\n".join(lines) + "\n"


def _runs_label(row: Dict[str, Any], with_strategy: bool) -> str:
    """The variant of a row, and its strategy where several ran."""
    strategy = row.get("strategy", CROSS)
    return f"{row['variant']}/{strategy}" if with_strategy else row["variant"]


def plot(
    rows: List[Dict[str, Any]], path: str, tasks: Mapping[str, SentenceTask] = GLUE_TASKS
) -> None:
    """
    Score per training size, one panel per task (its first GLUE metric), one series per base
    and variant with the standard deviation over seeds as error bars; one row of panels per
    recipe, titled with the candidate a tuned recipe stands for. With several strategies each
    size has one slot per strategy that ran on the task, and the series are points, not lines.
    A point averaged over fewer seeds than the grid has is marked `n=k`.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = _with_strategy(rows)
    groups = summarize(rows, tasks)
    seeds = {row["seed"] for row in rows}
    names = sorted({row["task"] for row in rows})
    sizes = sorted({row["train_size"] for row in rows}, key=_size_order)
    recipes = list(dict.fromkeys(row["recipe"] for row in rows))
    strategies = list(dict.fromkeys(row["strategy"] for row in rows))
    several_strategies = len(strategies) > 1
    width = max(4.5, 1.0 + 0.7 * len(strategies) * len(sizes)) if several_strategies else 4.5
    height = 4.2 if several_strategies else 3.6
    figure, axes = plt.subplots(
        len(recipes), len(names), figsize=(width * len(names), height * len(recipes)), squeeze=False
    )
    series = list(dict.fromkeys((row["base"], row["variant"]) for row in rows))
    several_bases = len({base for base, _ in series}) > 1
    for r, recipe in enumerate(recipes):
        for t, task in enumerate(names):
            axis, metric = axes[r][t], tasks[task].metrics[0]
            if task in ("mrpc", "qqp"):
                metric = "f1"
            ran = {key[2] for key in groups if key[3:5] == (recipe, task)}
            slots = [
                (size, strategy) for size in sizes for strategy in strategies if strategy in ran
            ]
            for number, (base, variant) in enumerate(series):
                # Series are dodged sideways so that their error bars do not hide each other.
                dodge = 0.08 * (number - (len(series) - 1) / 2)
                points = []
                for x, (size, strategy) in enumerate(slots):
                    key = (base, variant, strategy, recipe, task, size)
                    values = groups.get(key, {}).get(metric)
                    if values:
                        points.append((x + dodge, *_mean_std(values), len(values)))
                if points:
                    xs, means, stds, counts = zip(*points)
                    label = " ".join([*([base] if several_bases else []), variant])
                    axis.errorbar(
                        xs,
                        means,
                        yerr=stds,
                        marker="o",
                        capsize=4,
                        label=label,
                        linestyle="none" if several_strategies else "-",
                    )
                    for x, mean, count in zip(xs, means, counts):
                        if count < len(seeds):  # as the table's [n=k]: fewer seeds finished
                            axis.annotate(
                                f"n={count}",
                                (x, mean),
                                xytext=(4, -10),
                                textcoords="offset points",
                                fontsize=7,
                            )
            if several_strategies:
                ticks = [
                    strategy if len(sizes) == 1 else f"{strategy}\nn={size}"
                    for size, strategy in slots
                ]
                axis.set_xticks(range(len(slots)), ticks, rotation=30, ha="right", fontsize=8)
                axis.set_xlabel(
                    f"strategy ({sizes[0]} training examples)" if len(sizes) == 1 else ""
                )
            else:
                axis.set_xticks(range(len(slots)), sizes)
                axis.set_xlabel("training examples")
            axis.set_xlim(-0.5, len(slots) - 0.5)
            axis.set_ylabel(f"dev {tasks[task].metric_name(metric)} (%)")
            candidates = sorted(
                {row["candidate"] for row in rows if (row["recipe"], row["task"]) == (recipe, task)}
            )
            chosen = f" = {', '.join(candidates)}" if candidates != [recipe] else ""
            axis.set_title(f"{task.upper()}, recipe {recipe}{chosen}")
            axis.grid(alpha=0.3)
            axis.legend(fontsize=8)
    figure.tight_layout()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
