import csv
import math

import pytest

from tft_experiments.paired import (
    customised_variant,
    format_difference,
    full_injection,
    holm_adjusted,
    other_injection_seed,
    paired_difference,
    paired_table,
    unpaired_difference,
    write_paired_csv,
)


def test_three_pairs_against_hand_computed_t_statistics():
    """
    Differences 1, 2, 3: mean 2, standard deviation 1, t = 2 / (1 / sqrt(3)) = 3.4641 with 2
    degrees of freedom. Student's t with 2 degrees of freedom has the closed-form CDF
    F(t) = 1/2 + t / (2 sqrt(2 + t^2)), so p = 2 (1 - F(3.4641)) = 1 - 3.4641 / sqrt(14) =
    0.074180, and its 0.975 quantile solves t / sqrt(2 + t^2) = 0.95: t = 0.95 sqrt(2 / 0.0975)
    = 4.302653, so the 95% interval is 2 -+ 4.302653 / sqrt(3) = [-0.484138, 4.484138].
    """
    difference = paired_difference({1: 11.0, 2: 12.0, 3: 13.0}, {1: 10.0, 2: 10.0, 3: 10.0})
    assert difference.n == 3
    assert difference.mean == pytest.approx(2.0)
    assert difference.std == pytest.approx(1.0)
    assert difference.p_value == pytest.approx(1 - math.sqrt(12) / math.sqrt(14), abs=1e-9)
    assert difference.p_value == pytest.approx(0.074180, abs=1e-6)
    assert (difference.low, difference.high) == pytest.approx((-0.484138, 4.484138), abs=1e-6)


def test_only_the_seeds_both_settings_finished_are_paired():
    """
    Seeds 1 and 3 pair: differences 1 and 3, mean 2, std sqrt(2), t = 2 with 1 degree of
    freedom (Cauchy: F(t) = 1/2 + atan(t) / pi), p = 1 - 2 atan(2) / pi = 0.295167; the 0.975
    quantile is tan(0.475 pi) = 12.706205, the interval 2 -+ 12.706205.
    """
    difference = paired_difference({1: 5.0, 2: 7.0, 3: 9.0}, {1: 4.0, 3: 6.0})
    assert (difference.n, difference.mean, difference.std) == (2, 2.0, pytest.approx(2**0.5))
    assert difference.p_value == pytest.approx(1 - 2 * math.atan(2) / math.pi, abs=1e-9)
    assert difference.high == pytest.approx(2 + math.tan(0.475 * math.pi), abs=1e-6)
    assert paired_difference({1: 5.0}, {2: 4.0}) is None


def test_degenerate_differences():
    one = paired_difference({1: 5.0}, {1: 4.0})
    assert one.n == 1 and one.mean == 1.0
    assert all(math.isnan(value) for value in (one.std, one.low, one.high, one.p_value))
    equal = paired_difference({1: 5.0, 2: 6.0}, {1: 3.0, 2: 4.0})
    assert (equal.std, equal.low, equal.high, equal.p_value) == (0.0, 2.0, 2.0, 0.0)
    none = paired_difference({1: 5.0, 2: 6.0}, {1: 5.0, 2: 6.0})
    assert (none.mean, none.p_value) == (0.0, 1.0)
    assert format_difference(one, 3) == "+1.0 [n=1]"
    assert format_difference(equal, 2) == "+2.0 ± 0.0 (p 0.00) *"


def test_holm_adjustment_against_hand_computed_values():
    """
    p = 0.01, 0.04, 0.03, 0.005 (m = 4), sorted 0.005, 0.01, 0.03, 0.04: times 4, 3, 2, 1 gives
    0.02, 0.03, 0.06, 0.04, and the running maximum 0.02, 0.03, 0.06, 0.06. A NaN (one pair)
    stays NaN and leaves m = 2 for the others: 0.02 * 2 = 0.04, then max(0.04, 0.6 * 1) = 0.6;
    0.4 * 3 = 1.2 is capped at 1.
    """
    adjusted = holm_adjusted([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    nan = float("nan")
    with_nan = holm_adjusted([0.6, nan, 0.02])
    assert with_nan[0] == pytest.approx(0.6) and with_nan[2] == pytest.approx(0.04)
    assert math.isnan(with_nan[1])
    assert holm_adjusted([0.4, 0.5, 0.9]) == pytest.approx([1.0, 1.0, 1.0])
    assert holm_adjusted([]) == []


def rows_of(variant, strategy, scores, base="b"):
    return [
        {
            "base": base,
            "variant": variant,
            "strategy": strategy,
            "recipe": "paper",
            "candidate": "paper",
            "task": "stsb",
            "train_size": "1000",
            "seed": seed,
            "pearson": pearson,
            "spearman": pearson - 0.01,
        }
        for seed, pearson in scores.items()
    ]


def test_welch_difference_of_two_sets_of_gains_against_hand_computed_values():
    """
    Gains 4, 6, 8 (mean 6, variance 4) against 0, 2, 4 (mean 2, variance 4): difference 4,
    error sqrt(4/3 + 4/3) = sqrt(8/3), t = 4 / sqrt(8/3) = sqrt(6); with equal variances and
    sizes Welch's degrees of freedom are (8/3)^2 / (2 (4/3)^2 / 2) = 4. Student's t with 4
    degrees of freedom has F(t) = 1/2 + 3/8 u (1 - u^2 / 12) with u = t / sqrt(1 + t^2 / 4):
    u = sqrt(6 / 2.5), F = 0.964758, p = 0.070484; its 0.975 quantile is 2.776445 (tables), so
    the interval is 4 -+ 2.776445 sqrt(8/3) = [-0.533916, 8.533916].
    """
    difference = unpaired_difference([4.0, 6.0, 8.0], [0.0, 2.0, 4.0])
    assert (difference.n_first, difference.n_second) == (3, 3)
    assert difference.mean == pytest.approx(4.0)
    assert difference.error == pytest.approx(math.sqrt(8 / 3))
    u = math.sqrt(6 / 2.5)
    assert difference.p_value == pytest.approx(2 * (0.5 - 3 / 8 * u * (1 - u**2 / 12)), abs=1e-9)
    assert difference.p_value == pytest.approx(0.070484, abs=1e-6)
    assert (difference.low, difference.high) == pytest.approx((-0.533916, 8.533916), abs=1e-5)
    # Unequal spreads lower the degrees of freedom below n1 + n2 - 2: a wider interval than
    # the pooled test's.
    uneven = unpaired_difference([4.0, 6.0, 8.0], [2.0, 2.0, 2.1])
    assert uneven.high - uneven.mean > 2.776445 * uneven.error
    one = unpaired_difference([5.0], [1.0, 2.0])
    assert one.mean == pytest.approx(3.5) and math.isnan(one.p_value)
    assert unpaired_difference([3.0, 3.0], [1.0, 1.0]).p_value == 0.0
    assert unpaired_difference([], [1.0]) is None


def test_the_table_and_csv_pair_each_setting_with_its_reference(tmp_path):
    rows = (
        rows_of("none", "cross", {1: 0.80, 2: 0.70, 3: 0.75})
        + rows_of("tft", "cross", {1: 0.81, 2: 0.72, 3: 0.78})
        + rows_of("none", "smart", {1: 0.79, 3: 0.70})
    )
    table = paired_table(rows, "variant", "none").splitlines()
    assert (
        table[2]
        == "| base | recipe | train size | strategy | variant | STSB Pearson | STSB Spearman |"
    )
    # Differences 1, 2, 3 points: mean 2, std 1, p 0.074 (the hand-computed case above).
    assert (
        table[4] == "| b | paper | 1000 | cross | tft | +2.0 ± 1.0 (p 0.07) | +2.0 ± 1.0 (p 0.07) |"
    )
    assert len([line for line in table if line.startswith("| b ")]) == 1
    strategies = paired_table(rows, "strategy", "cross").splitlines()
    # Seeds 1 and 3: -1 and -5 points, t = -3 / 2 with 1 degree of freedom, p = 1 - 2
    # atan(1.5) / pi = 0.374.
    cell = "-3.0 ± 2.8 (p 0.37) [n=2]"
    assert strategies[4] == f"| b | paper | 1000 | none | smart | {cell} | {cell} |"
    assert paired_table(rows_of("none", "cross", {1: 0.5}), "variant", "none") == ""
    path = tmp_path / "paired.csv"
    write_paired_csv(rows, [("variant", "none", None), ("strategy", "cross", None)], str(path))
    written = list(csv.DictReader(open(path)))
    assert [(row["factor"], row["variant"], row["strategy"], row["metric"]) for row in written] == [
        ("variant", "tft", "cross", "pearson"),
        ("variant", "tft", "cross", "spearman"),
        ("strategy", "none", "smart", "pearson"),
        ("strategy", "none", "smart", "spearman"),
    ]
    assert float(written[0]["mean"]) == pytest.approx(2.0)
    assert float(written[0]["ci95_low"]) == pytest.approx(-0.484138, abs=1e-5)
    assert written[2]["n"] == "2"


def test_a_small_base_with_injection_is_compared_with_a_large_one_without(tmp_path):
    rows = (
        rows_of("none", "cross", {1: 0.80, 2: 0.70, 3: 0.75}, base="large")
        + rows_of("none", "cross", {1: 0.78, 2: 0.70, 3: 0.70}, base="small")
        + rows_of("tft", "cross", {1: 0.81, 2: 0.72, 3: 0.78}, base="small")
    )
    table = paired_table(rows, "variant", "none", title="vs large", reference_base="large")
    lines = table.splitlines()
    assert lines[0] == "### Paired differences: vs large"
    # small none - large none: -2, 0, -5 points, mean -7/3, std sqrt(19/3) = 2.5166,
    # t = -2.3333 / (2.5166 / sqrt(3)) = -1.6059 with 2 degrees of freedom:
    # p = 1 - 1.6059 / sqrt(2 + 1.6059^2) = 0.2495.
    cell = "-2.3 ± 2.5 (p 0.25)"
    assert lines[4] == f"| small | paper | 1000 | cross | none | {cell} | {cell} |"
    # small tft - large none: +1, +2, +3 points (the hand-computed case above).
    cell = "+2.0 ± 1.0 (p 0.07)"
    assert lines[5] == f"| small | paper | 1000 | cross | tft | {cell} | {cell} |"
    assert len([line for line in lines if line.startswith("| ")]) == 3  # header and two rows
    assert "variant minus `none` of large" in table
    path = tmp_path / "paired.csv"
    write_paired_csv(rows, [("variant", "none", None), ("variant", "none", "large")], str(path))
    written = [
        (row["base"], row["variant"], row["reference_base"], row["metric"], row["p_value"])
        for row in csv.DictReader(open(path))
        if row["metric"] == "pearson"
    ]
    assert [row[:3] for row in written] == [
        ("small", "tft", "small"),
        ("small", "none", "large"),
        ("small", "tft", "large"),
    ]
    t = (7 / 3) / (math.sqrt(19 / 3) / math.sqrt(3))
    assert float(written[1][4]) == pytest.approx(1 - t / math.sqrt(2 + t * t), abs=1e-9)


def test_a_second_injection_seed_is_compared_with_the_first():
    rows = (
        rows_of("none", "cross", {1: 0.80, 2: 0.70, 3: 0.75})
        + rows_of("tft", "cross", {1: 0.81, 2: 0.72, 3: 0.78})
        + rows_of("tft_iseed2", "cross", {1: 0.82, 2: 0.74, 3: 0.81})
    )
    assert other_injection_seed("tft_iseed2") == "tft" and other_injection_seed("tft") is None
    table = paired_table(rows, "variant", other_injection_seed, title="seeds").splitlines()
    assert table[0] == "### Paired differences: seeds"
    # Differences 1, 2, 3 points again.
    cell = "+2.0 ± 1.0 (p 0.07)"
    assert table[4] == f"| b | paper | 1000 | cross | tft_iseed2 | {cell} | {cell} |"
    assert len([line for line in table if line.startswith("| b ")]) == 1


def test_a_custom_variant_is_compared_with_the_variant_it_customises():
    rows = (
        rows_of("tft", "cross", {1: 0.81, 2: 0.72, 3: 0.78})
        + rows_of("tft_old", "cross", {1: 0.82, 2: 0.74, 3: 0.81})
        + rows_of("tft_old_iseed2", "cross", {1: 0.80, 2: 0.70})
        + rows_of("tft_iseed2", "cross", {1: 0.82, 2: 0.72})
    )
    reference = customised_variant({"tft_old": {"variant": "tft"}})
    assert [reference(v) for v in ("tft_old", "tft_old_iseed2", "tft", "none")] == [
        "tft",
        "tft_iseed2",
        None,
        None,
    ]
    table = paired_table(rows, "variant", reference, title="custom").splitlines()
    # tft_old - tft: 1, 2, 3 points; tft_old_iseed2 - tft_iseed2: -2 and -2 points.
    cell = "+2.0 ± 1.0 (p 0.07)"
    assert table[4] == f"| b | paper | 1000 | cross | tft_old | {cell} | {cell} |"
    cell = "-2.0 ± 0.0 (p 0.00) * [n=2]"
    assert table[5] == f"| b | paper | 1000 | cross | tft_old_iseed2 | {cell} | {cell} |"


def test_simplified_and_ablated_injections_are_compared_with_the_full_objective():
    rows = (
        rows_of("none", "cross", {1: 0.80, 2: 0.70, 3: 0.75})
        + rows_of("tft", "cross", {1: 0.81, 2: 0.72, 3: 0.78})
        + rows_of("tft_simple", "cross", {1: 0.82, 2: 0.74, 3: 0.81})
        + rows_of("+sentence", "cross", {1: 0.78, 2: 0.71, 3: 0.74})
        + rows_of("tft_simple_iseed2", "cross", {1: 0.80, 2: 0.70})
    )
    assert [
        full_injection(v)
        for v in ("tft_simple", "+binary-PP_iseed2", "tft", "tft_iseed2", "none", "tft_old")
    ] == ["tft", "tft_iseed2", None, None, None, None]
    table = paired_table(rows, "variant", full_injection, title="full").splitlines()
    # +sentence - tft: -3, -1, -4 points, mean -8/3, std sqrt(7/3) = 1.5275,
    # t = -2.6667 / (1.5275 / sqrt(3)) = -3.0237 with 2 degrees of freedom:
    # p = 1 - 3.0237 / sqrt(2 + 3.0237^2) = 0.0942.
    cell = "-2.7 ± 1.5 (p 0.09)"
    assert table[5] == f"| b | paper | 1000 | cross | +sentence | {cell} | {cell} |"
    # tft_simple - tft: 1, 2, 3 points; tft_simple_iseed2 has no tft_iseed2 to pair with.
    cell = "+2.0 ± 1.0 (p 0.07)"
    assert table[4] == f"| b | paper | 1000 | cross | tft_simple | {cell} | {cell} |"
    assert len([line for line in table if line.startswith("| b ")]) == 2
