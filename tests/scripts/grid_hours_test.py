import json

import pytest

from research.scripts.grid_hours import main, table


def _attempts(experiment, records):
    experiment.mkdir(parents=True)
    (experiment / "attempts.jsonl").write_text(
        "".join(
            json.dumps({"directory": d, "started": a, "ended": b, "outcome": o}) + "\n"
            for d, a, b, o in records
        )
    )


def test_hours_by_kind_with_unfinished_attempts_and_reuses_left_out(tmp_path, capsys):
    one = tmp_path / "research/results/one/experiment"
    _attempts(
        one,
        [
            # An injection stopped after 2 h, then done after 1.5 h more: 3.5 h, 2 unfinished.
            ("injection/minilm/tft", 0, 7200, "stopped"),
            ("injection/minilm/tft", 7200, 12600, "done"),
            # A fine-tuning lost after 0.25 h and done in 0.5 h; one done in 0.25 h.
            ("glue/minilm/tft/paper/mrpc/n1000/seed1", 0, 900, "lost"),
            ("glue/minilm/tft/paper/mrpc/n1000/seed1", 900, 2700, "done"),
            ("glue/minilm/none/paper/mrpc/n1000/seed1", 0, 900, "done"),
            # Taken from another grid: it ran there.
            ("glue/minilm/none/paper/mrpc/n1000/seed2", 0, 36000, "reused"),
        ],
    )
    other = tmp_path / "other"
    _attempts(other, [("glue/minilm/none/paper/stsb/n1000/seed1", 0, 1800, "failed")])
    lines = table([one, other]).splitlines()
    assert lines[2:] == [
        "| one | 2 | 3.5 | 3 | 1.0 | 2.2 | 4.5 |",
        "| other | 0 | 0.0 | 1 | 0.5 | 0.5 | 0.5 |",
        "| all | 2 | 3.5 | 4 | 1.5 | 2.8 | 5.0 |",
    ]
    main([str(one)])
    assert capsys.readouterr().out.splitlines()[2:] == [lines[2]]


def test_a_line_that_is_not_an_attempt_is_named(tmp_path):
    experiment = tmp_path / "experiment"
    _attempts(experiment, [("injection/minilm/tft", 0, 60, "done")])
    with open(experiment / "attempts.jsonl", "a") as log:
        log.write('{"directory": "glue/x"}\n')
    with pytest.raises(ValueError, match=r"attempts.jsonl, line 2: not an attempt record"):
        table([experiment])
    with pytest.raises(FileNotFoundError, match="no attempts recorded"):
        table([tmp_path / "missing"])
