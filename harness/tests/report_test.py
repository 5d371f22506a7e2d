"""
The report (`report.py`): the results table and the plot mark settings with fewer seeds.
"""

from tft_experiments.report import markdown_table, plot


def rte_row(variant, seed, accuracy):
    """A finished run's row of the table: RTE accuracy at 1k, recipe `paper`."""
    return {
        "base": "b",
        "variant": variant,
        "recipe": "paper",
        "candidate": "paper",
        "task": "rte",
        "train_size": "1000",
        "seed": seed,
        "accuracy": accuracy,
        "directory": "d",
    }


def test_table_marks_cells_with_fewer_seeds_and_gains_over_none():
    table = markdown_table(
        [rte_row("none", 1, 0.5), rte_row("none", 2, 0.75), rte_row("tft", 1, 0.75)]
    )
    lines = table.splitlines()
    assert "| 1000 | none | 62.5 ± 17.7 |" in lines
    assert "| 1000 | tft | **75.0 ± 0.0 [n=1] (+12.5)** |" in lines
    # A size where only the base has finished: nothing to compare, so nothing in bold.
    lone = dict(rte_row("none", 1, 0.5), train_size="all")
    assert (
        "| all | none | 50.0 ± 0.0 [n=1] |"
        in markdown_table([rte_row("none", 1, 0.5), rte_row("none", 2, 0.75), lone]).splitlines()
    )


def test_plot_marks_points_with_fewer_seeds(tmp_path, monkeypatch):
    from matplotlib.axes import Axes

    marks = []
    monkeypatch.setattr(Axes, "annotate", lambda axis, text, xy, **kwargs: marks.append((text, xy)))
    plot(
        [rte_row("none", 1, 0.5), rte_row("none", 2, 0.75), rte_row("tft", 1, 0.75)],
        str(tmp_path / "scores.png"),
    )
    # Only tft's point lacks a seed; it sits at x = 0 dodged right by 0.04, at its mean 75%.
    assert marks == [("n=1", (0.04, 75.0))]
    assert (tmp_path / "scores.png").stat().st_size > 0


def test_plot_gives_each_strategy_a_slot(tmp_path, monkeypatch):
    from matplotlib.axes import Axes

    def row(variant, strategy, seed, f1):
        return {
            **dict(base="b", variant=variant, recipe="paper", candidate="paper", task="mrpc"),
            **dict(train_size="1000", seed=seed, accuracy=0.5, f1=f1, directory="d"),
            "strategy": strategy,
        }

    marks, ticks = [], []
    monkeypatch.setattr(Axes, "annotate", lambda axis, text, xy, **kwargs: marks.append((text, xy)))
    original = Axes.set_xticks
    monkeypatch.setattr(
        Axes,
        "set_xticks",
        lambda axis, positions, labels=None, **kwargs: (
            ticks.append((list(positions), labels)) or original(axis, positions, labels, **kwargs)
        ),
    )
    rows = [row("none", "cross", 1, 0.8), row("none", "cross", 2, 0.9)]
    rows += [row("tft", "cross", 1, 0.8), row("tft", "cross", 2, 0.8)]
    rows += [row("none", "siamese_mnr", 1, 0.7), row("none", "siamese_mnr", 2, 0.7)]
    rows += [row("tft", "siamese_mnr", 1, 0.6)]
    plot(rows, str(tmp_path / "scores.png"))
    # Slot 0: cross, slot 1: siamese_mnr; tft is dodged right by 0.04; its MNR point lacks a seed.
    assert ticks == [([0, 1], ["cross", "siamese_mnr"])]
    assert marks == [("n=1", (1.04, 60.0))]
