"""The analysis scripts' one loader of grids' runs.csv, and the scripts that use it."""

import importlib
import pathlib
import runpy
import sys
import warnings

import pytest

from research.scripts import (
    REPOSITORY,
    adapter_variants,
    claims_size_tables,
    claims_verdicts,
    multisource_verdicts,
)
from research.scripts.grid_scores import ScoreKey, read_scores

HEADER = "base,variant,recipe,task,train_size,candidate,seed,metric,value,directory,strategy\n"


def runs_csv(path, rows):
    """`rows`: (base, variant, recipe, task, size, seed, metric, value, strategy)."""
    lines = [
        f"{b},{v},{r},{t},{n},lr0.0001,{s},{m},{value},glue/x,{strategy}\n"
        for b, v, r, t, n, s, m, value, strategy in rows
    ]
    path.write_text(HEADER + "".join(lines))
    return path


def test_scores_are_percent_per_setting_and_seed_of_one_recipe(tmp_path):
    path = runs_csv(
        tmp_path / "runs.csv",
        [
            ("minilm", "tft", "tuned", "mrpc", "1000", 1, "f1", 0.8125, "cross"),
            ("minilm", "tft", "tuned", "mrpc", "1000", 2, "f1", 0.75, "cross"),
            ("minilm", "tft", "paper", "mrpc", "1000", 1, "f1", 0.5, "cross"),
            ("minilm", "tft", "tuned", "mrpc", "all", 1, "f1", 0.875, "smart"),
        ],
    )
    scores = read_scores([path])
    assert scores == {
        ScoreKey("minilm", "tft", "cross", "mrpc", "f1", "1000"): {1: 81.25, 2: 75.0},
        ScoreKey("minilm", "tft", "smart", "mrpc", "f1", "all"): {1: 87.5},
    }
    assert read_scores([path], recipe="paper", seeds=[2]) == {}
    assert read_scores([path], seeds=[2]) == {
        ScoreKey("minilm", "tft", "cross", "mrpc", "f1", "1000"): {2: 75.0}
    }


def test_a_run_two_grids_hold_must_score_the_same_in_both(tmp_path):
    row = ("minilm", "none", "tuned", "rte", "1000", 3, "accuracy", 0.5, "cross")
    first = runs_csv(tmp_path / "first.csv", [row])
    same = runs_csv(tmp_path / "same.csv", [row])
    other = runs_csv(tmp_path / "other.csv", [row[:7] + (0.625, "cross")])
    assert read_scores([first, same]) == {
        ScoreKey("minilm", "none", "cross", "rte", "accuracy", "1000"): {3: 50.0}
    }
    with pytest.raises(ValueError, match=r"other.csv:2: .* seed 3 scores 62.5, another grid 50.0"):
        read_scores([first, other])
    with pytest.raises(FileNotFoundError):
        read_scores([tmp_path / "missing.csv"])


def test_adapter_variants_are_paired_by_seed(tmp_path):
    # MRPC accuracy, seeds 1-3: not shared - houlsby = +1, +2, 0: mean 1.0, std 1.0,
    # t = 1 / (1 / sqrt(3)) = 1.732 with 2 degrees of freedom: p = 1 - t / sqrt(2 + t^2) = 0.225.
    rows = []
    for seed, houlsby, not_shared in [(1, 0.70, 0.71), (2, 0.72, 0.74), (3, 0.74, 0.74)]:
        for strategy, value in (("adapters_houlsby", houlsby), ("adapters_not_shared", not_shared)):
            rows.append(
                ("minilm", "none", "tuned", "mrpc", "1000", seed, "accuracy", value, strategy)
            )
    table = adapter_variants.table(read_scores([runs_csv(tmp_path / "runs.csv", rows)]))
    assert table[2] == "| none | adapters_not_shared | +1.0 ± 1.0 (p 0.23) |  |  |  |"
    assert table[3:] == [
        "| none | adapters_three_shared |  |  |  |  |",
        "| tft | adapters_not_shared |  |  |  |  |",
        "| tft | adapters_three_shared |  |  |  |  |",
    ]


def test_size_tables_average_each_variants_two_injections(tmp_path):
    # MRPC accuracy: tft 70, 72, 74 and tft_iseed2 72, 72, 76 average 71, 72, 75; none 70, 70,
    # 71: differences +1, +2, +4, mean 2.33, std 1.53, t 2.65 with 2 degrees of freedom:
    # p = 1 - t / sqrt(2 + t^2) = 1 - 2.646 / 3 = 0.118.
    rows = []
    for variant, values in [
        ("tft", (0.70, 0.72, 0.74)),
        ("tft_iseed2", (0.72, 0.72, 0.76)),
        ("none", (0.70, 0.70, 0.71)),
    ]:
        for seed, value in enumerate(values, start=1):
            rows.append(
                ("minilm", variant, "tuned", "mrpc", "1000", seed, "accuracy", value, "cross")
            )
    scores = read_scores([runs_csv(tmp_path / "runs.csv", rows)])
    (title, rows), _ = claims_size_tables.tables(scores)
    assert rows[1] == ("tft (mean of 2 injections) - none", ["+2.3 ± 1.5 (p 0.12)", "", "", ""])
    # Injection seed 2 - seed 1: +2, 0, +2, mean 1.33, std 1.15, t 2: p = 1 - 2 / sqrt(6) = 0.18;
    # the fine-tuning seeds' std is the mean of each injection's own, 2.0 and 2.31.
    assert rows[3][1][0] == "+1.3 ± 1.2 (p 0.18); seeds' std 2.2"


def test_the_committed_verdicts_regenerate_byte_for_byte():
    for seeds in ([1, 2, 3], [2, 3]):
        name, header = claims_verdicts.file_header(
            "verdicts", claims_verdicts.HEADER, seeds, claims_verdicts.SEEDS, "seeds 1-3"
        )
        tables = claims_verdicts.markdown(claims_verdicts.verdict_sections(seeds), len(seeds))
        assert (REPOSITORY / "research/results/claims" / name).read_text() == header + tables


# The scripts' package and folder, wherever the package lives.
PACKAGE = adapter_variants.__package__
FOLDER = pathlib.Path(adapter_variants.__file__).parent


def paragraphs(text):
    """`text`'s paragraphs, each with its whitespace collapsed."""
    return [" ".join(paragraph.split()) for paragraph in text.strip().split("\n\n")]


@pytest.mark.parametrize(
    "name",
    # The scripts that take options; the others run at once (or are libraries of the rest).
    sorted(path.stem for path in FOLDER.glob("*.py") if "ArgumentParser(" in path.read_text()),
)
def test_every_script_with_options_runs_as_a_module_and_describes_itself(name, monkeypatch, capsys):
    """
    `python -m research.scripts.NAME --help`, the way the package's docstring runs its scripts:
    the script runs as a module of the package (its imports resolve from there), its parser
    builds and answers, and the description it prints, where it has one, is the first paragraph
    of its docstring.
    """
    monkeypatch.setattr(sys, "argv", [f"{name}.py", "--help"])
    with pytest.raises(SystemExit) as ended, warnings.catch_warnings():
        # runpy's note that the module is imported already (by another test of this session).
        warnings.simplefilter("ignore", RuntimeWarning)
        runpy.run_module(f"{PACKAGE}.{name}", run_name="__main__")
    assert ended.value.code == 0
    usage, after_usage, *_ = paragraphs(capsys.readouterr().out)
    assert usage.startswith(f"usage: {name}.py [-h]")
    if not after_usage.startswith(("positional arguments:", "options:")):
        summary = paragraphs(importlib.import_module(f"{PACKAGE}.{name}").__doc__)[0]
        assert after_usage == summary


def test_multisource_verdicts_pair_by_seed_and_name_the_grids_not_written_yet(
    tmp_path, monkeypatch
):
    # MRPC accuracy at 1k, seeds 1-3 of the 10: tft_multi 72, 74, 75 against none 70, 70, 72:
    # +2, +4, +3, mean 3.0, std 1.0, t = 3 sqrt(3) = 5.196 with 2 degrees of freedom:
    # p = 1 - t / sqrt(2 + t^2) = 0.035. Against tft (Quora only) 71, 74, 73: +1, 0, +2, mean
    # 1.0, std 1.0, p 0.225 (as above).
    rows = []
    for variant, values in [
        ("none", (0.70, 0.70, 0.72)),
        ("tft", (0.71, 0.74, 0.73)),
        ("tft_multi", (0.72, 0.74, 0.75)),
    ]:
        for seed, value in enumerate(values, start=1):
            rows.append(
                ("minilm", variant, "tuned", "mrpc", "1000", seed, "accuracy", value, "cross")
            )
    grids = {"claims_multisource_cpu": runs_csv(tmp_path / "runs.csv", rows)}
    grids["claims_domain_cpu"] = tmp_path / "not_yet.csv"
    monkeypatch.setattr(multisource_verdicts, "GRIDS", grids)
    name, text, _ = multisource_verdicts.verdicts()
    assert name == "verdicts_multisource.md"
    assert "Not written yet (their tables are empty): claims_domain_cpu." in text
    # Without seed 1 (the sweep's): +4, +3, mean 3.5, std 0.71, t = 7.0 with 1 degree of freedom:
    # p = 1 - (2 / pi) atan(7) = 0.090.
    name, held_out, _ = multisource_verdicts.verdicts((2, 3))
    assert name == "verdicts_multisource_seeds_2_3.md"
    assert "differences over fine-tuning seeds 2, 3 only: mean" in held_out
    assert (
        "| minilm tft_multi - minilm none, n 1000 | +3.5 ± 0.7 (p 0.09) |  |  |  |"
        in held_out.splitlines()
    )
    lines = text.splitlines()
    assert (
        "| minilm tft_multi - minilm none, n 1000 | +3.0 ± 1.0 (p 0.04) * [n=3] |  |  |  |" in lines
    )
    assert "| minilm tft_multi - minilm tft, n 1000 | +1.0 ± 1.0 (p 0.23) [n=3] |  |  |  |" in lines
