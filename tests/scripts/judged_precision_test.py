"""The statistics of research/scripts/judged_precision.py, against hand-computed values."""

import pytest

from research.scripts import judged_precision


def test_wilson_interval():
    # 8 of 10, z = 1.96: centre (0.8 + 3.8416 / 20) / 1.38416 = 0.71674, half-width
    # 1.96 * sqrt(0.016 + 3.8416 / 400) / 1.38416 = 0.22658.
    low, high = judged_precision.wilson(8, 10)
    assert low == pytest.approx(0.49016, abs=1e-5)
    assert high == pytest.approx(0.94332, abs=1e-5)
    # All correct: the interval still has room below 1.
    low, high = judged_precision.wilson(5, 5)
    assert low == pytest.approx(0.56551, abs=1e-5) and high == pytest.approx(1.0)


def test_cohen_kappa():
    # 3 of 4 labels agree (0.75); chance agreement 0.5 * 0.25 + 0.25 * 0.5 + 0.25 * 0.25 = 0.3125;
    # kappa = (0.75 - 0.3125) / (1 - 0.3125) = 7 / 11.
    first = ["correct", "correct", "partial", "wrong"]
    second = ["correct", "partial", "partial", "wrong"]
    assert judged_precision.cohen_kappa(first, second) == pytest.approx(7 / 11)
    assert judged_precision.cohen_kappa(first, first) == pytest.approx(1.0)
    # Agreement no better than chance: kappa 0.
    assert judged_precision.cohen_kappa([True, False], [True, True]) == pytest.approx(0.0)
    # One label throughout on both sides leaves kappa undefined; it counts as agreement.
    assert judged_precision.cohen_kappa(["correct"] * 3, ["correct"] * 3) == 1.0
