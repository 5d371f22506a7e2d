"""
Paired comparisons of an experiment's runs: two settings that differ in one factor (the
injection variant, or the fine-tuning strategy) and agree in everything else, compared seed by
seed. A seed fixes the training subsample and the fine-tuning's randomness, so the difference
of two runs with the same seed removes the variation that seeds share; the mean of the
differences, their standard deviation, a paired t-test and its confidence interval describe the
gain. Only seeds that both settings finished are paired; `n` says how many.
"""

import csv
import math
import statistics
from dataclasses import dataclass
from typing import (
    Any,
    Callable,
    Dict,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from scipy import stats

from tft_allennlp.common.glue_tasks import GLUE_TASKS
from tft_allennlp.common.sentence_tasks import SentenceTask
from tft_experiments.report import _with_strategy
from tft_experiments.variants import SEEDED, VARIANTS, split_variant

# The coordinates of a run besides the compared factor and the seed.
COORDINATES = ("base", "variant", "strategy", "recipe", "task", "train_size")


@dataclass(frozen=True)
class PairedDifference:
    """
    Treated minus control over the seeds both finished: `n` pairs, the mean and standard
    deviation of the differences, the two-sided paired t-test's `p_value` and the
    `confidence` interval of the mean difference (`low`, `high`). With one pair the spread, the
    test and the interval are undefined (NaN).
    """

    n: int
    mean: float
    std: float
    low: float
    high: float
    p_value: float
    confidence: float = 0.95


def seed_differences(
    treated: Mapping[Any, float], control: Mapping[Any, float]
) -> Dict[Any, float]:
    """Seed -> `treated - control`, for the seeds both have."""
    return {seed: treated[seed] - control[seed] for seed in treated if seed in control}


def paired_difference(
    treated: Mapping[Any, float], control: Mapping[Any, float], confidence: float = 0.95
) -> Optional[PairedDifference]:
    """
    The paired difference of two settings' scores, each keyed by seed; None when no seed is in
    both. Paired t-test: `t = mean / (std / sqrt(n))` with `n - 1` degrees of freedom; the
    interval is `mean +- t_{(1 + confidence) / 2, n - 1} * std / sqrt(n)`. Differences that are
    all equal have a zero standard deviation: p is 0 unless they are 0 (then 1), and the interval
    is the point.
    """
    differences = list(seed_differences(treated, control).values())
    if not differences:
        return None
    n = len(differences)
    mean = statistics.mean(differences)
    if n == 1:
        nan = float("nan")
        return PairedDifference(1, mean, nan, nan, nan, nan, confidence)
    std = statistics.stdev(differences)
    if std == 0:
        return PairedDifference(n, mean, 0.0, mean, mean, float(mean == 0), confidence)
    error = std / math.sqrt(n)
    p_value = 2 * stats.t.sf(abs(mean / error), n - 1)
    margin = stats.t.ppf((1 + confidence) / 2, n - 1) * error
    return PairedDifference(n, mean, std, mean - margin, mean + margin, p_value, confidence)


@dataclass(frozen=True)
class UnpairedDifference:
    """
    The mean of `first` minus the mean of `second`, two independent sets of `n_first` and
    `n_second` values: its standard `error`, Welch's two-sided `p_value` and the `confidence`
    interval (`low`, `high`); NaN where either set has fewer than two values.
    """

    n_first: int
    n_second: int
    mean: float
    error: float
    low: float
    high: float
    p_value: float
    confidence: float = 0.95


def unpaired_difference(
    first: Sequence[float], second: Sequence[float], confidence: float = 0.95
) -> Optional[UnpairedDifference]:
    """
    Welch's t-test of `mean(first) - mean(second)` for values that share no seed-by-seed
    pairing, such as the per-seed gains of injection at 1k examples against those on the whole
    training set (a 1k subsample and the whole set have nothing in common that a seed fixes):
    `error = sqrt(var1 / n1 + var2 / n2)`, `t = mean / error` with the Welch-Satterthwaite
    degrees of freedom `error^4 / ((var1 / n1)^2 / (n1 - 1) + (var2 / n2)^2 / (n2 - 1))`. None
    when either set is empty; both sets without spread: p is 0 unless the means are equal.
    """
    if not first or not second:
        return None
    n1, n2 = len(first), len(second)
    mean = statistics.mean(first) - statistics.mean(second)
    if n1 < 2 or n2 < 2:
        nan = float("nan")
        return UnpairedDifference(n1, n2, mean, nan, nan, nan, nan, confidence)
    part1, part2 = statistics.variance(first) / n1, statistics.variance(second) / n2
    error = math.sqrt(part1 + part2)
    if error == 0:
        return UnpairedDifference(n1, n2, mean, 0.0, mean, mean, float(mean == 0), confidence)
    freedom = error**4 / (part1**2 / (n1 - 1) + part2**2 / (n2 - 1))
    p_value = 2 * stats.t.sf(abs(mean / error), freedom)
    margin = stats.t.ppf((1 + confidence) / 2, freedom) * error
    return UnpairedDifference(
        n1, n2, mean, error, mean - margin, mean + margin, p_value, confidence
    )


def holm_adjusted(p_values: Sequence[float]) -> List[float]:
    """
    Holm's step-down adjustment of a family of p-values for testing all of them at once: the
    i-th smallest of the m defined ones becomes `max_{j <= i} min(1, (m - j + 1) p_(j))`, so
    that "adjusted p < level" rejects with a family-wise error rate of at most `level` (Holm,
    1979). Returned in the input's order; NaN (a test with one pair) stays NaN and is not
    counted in m.
    """
    defined = sorted(
        (value, index) for index, value in enumerate(p_values) if not math.isnan(value)
    )
    adjusted = [float("nan")] * len(p_values)
    running = 0.0
    for rank, (value, index) in enumerate(defined):
        running = max(running, min(1.0, (len(defined) - rank) * value))
        adjusted[index] = running
    return adjusted


Reference = Union[str, Callable[[str], Optional[str]]]
"""A level every other level is compared with, or a function from a level to its reference."""


def paired_comparisons(
    rows: List[Dict[str, Any]],
    factor: str,
    reference: Reference,
    confidence: float = 0.95,
    reference_base: Optional[str] = None,
    tasks: Mapping[str, SentenceTask] = GLUE_TASKS,
) -> Iterator[Tuple[Dict[str, Any], str, PairedDifference]]:
    """
    Every level of `factor` ("variant" or "strategy") against its reference level at equal
    other coordinates, for each GLUE metric of the task, in percentage points: yields (the
    treated row's coordinates, metric, difference). With `reference_base`, the reference is
    that base's run at the reference level, for the runs of every base (a small model with
    injection against a larger one without). `tasks`: the grid's tasks by name (its custom ones
    too, `ExperimentSpec.task_table`).
    """
    reference_of = reference if callable(reference) else lambda level: reference
    scores: Dict[Tuple, Dict[Any, Dict[str, float]]] = {}
    for row in _with_strategy(rows):
        key = tuple(row[name] for name in COORDINATES)
        scores.setdefault(key, {})[row["seed"]] = row
    position = COORDINATES.index(factor)
    base = COORDINATES.index("base")
    for key, by_seed in scores.items():
        level = reference_of(key[position])
        if level is None:
            continue
        control_key = key[:position] + (level,) + key[position + 1 :]
        if reference_base is not None:
            control_key = control_key[:base] + (reference_base,) + control_key[base + 1 :]
        if control_key == key:
            continue
        control = scores.get(control_key)
        if control is None:
            continue
        coordinates = dict(zip(COORDINATES, key))
        for metric in tasks[coordinates["task"]].metrics:
            difference = paired_difference(
                {seed: 100 * row[metric] for seed, row in by_seed.items() if metric in row},
                {seed: 100 * row[metric] for seed, row in control.items() if metric in row},
                confidence,
            )
            if difference is not None:
                yield coordinates, metric, difference


def format_difference(difference: PairedDifference, seeds: int, level: float = 0.05) -> str:
    """`+1.2 ± 0.8 (p 0.12)`, `*` when p < `level`, `[n=k]` when fewer than `seeds` pairs."""
    text = f"{difference.mean:+.1f}"
    if difference.n > 1:
        text += f" ± {difference.std:.1f} (p {difference.p_value:.2f})"
        if difference.p_value < level:
            text += " *"
    if difference.n < seeds:
        text += f" [n={difference.n}]"
    return text


def paired_table(
    rows: List[Dict[str, Any]],
    factor: str,
    reference: Reference,
    level: float = 0.05,
    title: Optional[str] = None,
    reference_base: Optional[str] = None,
    tasks: Mapping[str, SentenceTask] = GLUE_TASKS,
) -> str:
    """
    Markdown: a row per base, recipe, training size and compared setting, a column per task
    metric; cells are the paired differences against `reference` (`format_difference`), of
    the same base or of `reference_base` (`paired_comparisons`).
    """
    comparisons = list(
        paired_comparisons(rows, factor, reference, 1 - level, reference_base, tasks)
    )
    if not comparisons:
        return ""
    seeds = len({row["seed"] for row in rows})
    names = sorted({row["task"] for row in rows})
    columns = [(name, metric) for name in names for metric in tasks[name].metrics]
    other = "strategy" if factor == "variant" else "variant"
    cells: Dict[Tuple, Dict[Tuple[str, str], str]] = {}
    for coordinates, metric, difference in comparisons:
        line = tuple(coordinates[name] for name in ("base", "recipe", "train_size", other, factor))
        cells.setdefault(line, {})[(coordinates["task"], metric)] = format_difference(
            difference, seeds, level
        )
    header = (
        f"| base | recipe | train size | {other} | {factor} | "
        + " | ".join(
            f"{name.upper()} {tasks[name].metric_name(metric)}" for name, metric in columns
        )
        + " |"
    )
    described = f"`{reference}`" if isinstance(reference, str) else "its reference"
    if reference_base is not None:
        described += f" of {reference_base}"
    lines = [
        f"### Paired differences: {title or f'{factor} - {described}'}",
        "",
        header,
        "|" + "---|" * (len(columns) + 5),
    ]
    for line, values in cells.items():
        lines.append(
            "| "
            + " | ".join(str(value) for value in line)
            + " | "
            + " | ".join(values.get(column, "") for column in columns)
            + " |"
        )
    lines += [
        "",
        f"Dev score differences (percentage points), {factor} minus {described} with "
        f"everything else equal, paired by seed (same subsample and fine-tuning seed): mean ± "
        f"standard deviation of the differences over the seeds both finished, p of the "
        f"two-sided paired t-test; * p < {level}; [n=k]: k pairs only.",
    ]
    return "\n".join(lines) + "\n"


def other_injection_seed(variant: str) -> Optional[str]:
    """The reference of a variant injected with another seed (`tft_iseed2`): `tft`."""
    name, seed = split_variant(variant)
    return name if seed is not None else None


def full_injection(variant: str) -> Optional[str]:
    """
    The reference of a built-in injection variant other than `tft` (`tft_simple`, the paper's
    ablations `+sentence`, `+3way-PP`, `+binary-PP`, each with its injection seed): the full
    objective `tft` of the same injection seed, so that what the variant leaves out or changes
    is paired on its own.
    """
    name, seed = split_variant(variant)
    if name in ("none", "tft") or name not in VARIANTS:
        return None
    return "tft" + (f"{SEEDED}{seed}" if seed is not None else "")


def customised_variant(custom_variants: Mapping[str, Mapping[str, Any]]) -> Callable:
    """The reference of a custom variant (`tft_old_aligner`, see `ExperimentSpec`): the
    variant it customises (`tft`), so that the change it makes is paired on its own."""

    def reference(variant: str) -> Optional[str]:
        name, seed = split_variant(variant)
        custom = custom_variants.get(name)
        if custom is None:
            return None
        return custom["variant"] + (f"{SEEDED}{seed}" if seed is not None else "")

    return reference


def write_paired_csv(
    rows: List[Dict[str, Any]],
    comparisons: List[Tuple[str, Reference, Optional[str]]],
    path: str,
    tasks: Mapping[str, SentenceTask] = GLUE_TASKS,
) -> None:
    """
    Every paired comparison of `comparisons` ((factor, reference, reference base or None)),
    one line per comparison and metric, with the difference's n, mean, std, 95% interval and
    p-value; the reference columns name the level (and base) compared with.
    """
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [*COORDINATES, "factor", "reference", "reference_base", "metric", "n", "mean"]
            + ["std", "ci95_low", "ci95_high", "p_value"]
        )
        for factor, reference, reference_base in comparisons:
            reference_of = reference if callable(reference) else lambda level: reference
            differences = paired_comparisons(
                rows, factor, reference, reference_base=reference_base, tasks=tasks
            )
            for coordinates, metric, d in differences:
                writer.writerow(
                    [coordinates[name] for name in COORDINATES]
                    + [factor, reference_of(coordinates[factor])]
                    + [reference_base or coordinates["base"], metric, d.n, d.mean, d.std]
                    + [d.low, d.high, d.p_value]
                )
