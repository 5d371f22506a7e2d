"""research/scripts/tabulate_runs.py: the table of a grid made before tables, from its run files."""

import json

from research.scripts.tabulate_runs import main, tabulate
from tft_experiments.table import TABLE, read_table
from tft_experiments.trained_configs import config_fingerprint


def write(path, value):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))


def test_every_finished_run_becomes_a_row_once(tmp_path, monkeypatch, capsys):
    grid = tmp_path / "research/results/grid/experiment"
    (tmp_path / "research/results/other/experiment").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    run, injection = grid / "glue/m/tft/paper/rte/n8/seed1", grid / "injection/m/tft"
    config = {"model": {"model_name": f"{grid}/injection/m/tft/encoder"}, "lr": 1e-4}
    write(run / "config.json", config)
    write(run / "metrics.json", {"validation_accuracy": 0.5, "best_epoch": 1})
    write(run / "parameter_counts.json", {"trainable": 3, "frozen": 1, "total": 4})
    for epoch in (0, 1):
        write(run / f"metrics_epoch_{epoch}.json", {"validation_accuracy": epoch / 2})
    # Taken from a grid named where the results were before they moved.
    write(run / "reused_from.json", {"grid": "results/other/experiment", "run": "x"})
    write(injection / "config.json", {"trainer": {}})
    write(injection / "metrics.json", {"validation_phrase_accuracy": 0.9})
    write(injection / "encoder_fingerprint.json", {"sha256": "a" * 64})
    write(injection / "encoder/metrics.json", {})  # an encoder's files are no run
    write(grid / "glue/m/none/paper/rte/n8/seed1/config.json", {})  # unfinished
    attempts = [
        {"directory": "injection/m/tft", "started": 1.0, "ended": 2.0, "outcome": "failed"},
        {"directory": "injection/m/tft", "started": 3.0, "ended": 5.0, "outcome": "done"},
    ]
    (grid / "attempts.jsonl").write_text("".join(json.dumps(a) + "\n" for a in attempts))

    main(["research/results/grid/experiment", "--epochs", "research/results/grid/experiment"])
    assert capsys.readouterr().out == "research/results/grid/experiment: 2 rows added\n"
    rows = read_table("research/results/grid/experiment")
    assert rows == {
        "glue/m/tft/paper/rte/n8/seed1": {
            "directory": "glue/m/tft/paper/rte/n8/seed1",
            "config_sha256": config_fingerprint(config, str(grid)),
            "reused_from": "research/results/other/experiment",
            "parameters": {"trainable": 3, "frozen": 1, "total": 4},
            "metrics": {"validation_accuracy": 0.5, "best_epoch": 1},
            "epochs": [{"validation_accuracy": 0.0}, {"validation_accuracy": 0.5}],
        },
        "injection/m/tft": {
            "directory": "injection/m/tft",
            "config_sha256": config_fingerprint({"trainer": {}}, str(grid)),
            "started": 3.0,
            "ended": 5.0,
            "encoder_sha256": "a" * 64,
            "metrics": {"validation_phrase_accuracy": 0.9},
        },
    }
    # The table's lines are sorted by directory; a second pass adds nothing.
    table = (grid / TABLE).read_text()
    assert [json.loads(line)["directory"] for line in table.splitlines()] == sorted(rows)
    assert tabulate(str(grid)) == 0 and (grid / TABLE).read_text() == table
