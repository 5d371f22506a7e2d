import csv
import json
import os
import statistics
import subprocess
import sys

import pytest
from allennlp.common.checks import ConfigurationError

from tests import FIXTURES_ROOT, PROJECT_ROOT
from tft_allennlp.experiments import ExperimentSpec
from tft_allennlp.experiments.runner import ExperimentRunner


@pytest.fixture(scope="module")
def experiment(tmp_path_factory, tiny_bert):
    """A 2 variants x 2 seeds grid on the fixtures, run once by `allennlp tft-experiment`."""
    directory = tmp_path_factory.mktemp("experiment")
    split = {"dataset_reader.validation_fraction": 0.25, "validation_dataset_reader.validation_fraction": 0.25}
    spec = {
        "output_dir": str(directory / "out"),
        "base_models": {"tiny": tiny_bert},
        "variants": ["none", "tft"],
        "tasks": ["stsb"],
        "train_sizes": [8],
        "seeds": [1, 2],
        "glue_dir": str(FIXTURES_ROOT / "glue"),
        "glue_overrides": {"trainer.num_epochs": 1},
        "paraphrase_corpus": str(FIXTURES_ROOT / "paraphrase/aligned.jsonl"),
        "injection_overrides": {"trainer.num_epochs": 1, **split},
    }
    spec_path = directory / "spec.json"
    spec_path.write_text(json.dumps(spec))
    command = [sys.executable, "-m", "allennlp", "tft-experiment", str(spec_path)]
    result = subprocess.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, env=dict(os.environ))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "runs: {'done': 5}" in result.stdout
    return ExperimentSpec.from_file(str(spec_path))


def glue_metrics(run):
    return json.loads(open(os.path.join(run.directory, "metrics.json")).read())


def test_every_run_has_its_config_metrics_and_log(experiment):
    runs = list(experiment.glue_runs())
    assert len(runs) == 4
    for run in runs:
        assert {"config.json", "metrics.json", "train.log"} <= set(os.listdir(run.directory))
        config = json.loads(open(os.path.join(run.directory, "config.json")).read())
        assert config["random_seed"] == run.seed and config["dataset_reader"]["train_size"] == 8
        model = config["model"]["text_field_embedder"]["token_embedders"]["tokens"]["model_name"]
        injected = os.path.join(experiment.output_dir, "injection/tiny/tft/encoder")
        assert model == (injected if run.variant == "tft" else experiment.base_models["tiny"])
    assert os.path.exists(os.path.join(experiment.output_dir, "injection/tiny/tft/encoder/model.safetensors"))


def test_csv_and_table_hold_the_runs_metrics(experiment):
    with open(os.path.join(experiment.output_dir, "runs.csv")) as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 4 * 3  # runs x (pearson, spearman, combined_score)
    table = open(os.path.join(experiment.output_dir, "results.md")).read()
    for variant in ("none", "tft"):
        pearsons = []
        for run in experiment.glue_runs():
            if run.variant != variant:
                continue
            metrics = glue_metrics(run)
            written = {row["metric"]: float(row["value"]) for row in rows if row["directory"].endswith(
                os.path.relpath(run.directory, experiment.output_dir))}
            assert written == {name: metrics[f"validation_{name}"] for name in ("pearson", "spearman", "combined_score")}
            pearsons.append(100 * metrics["validation_pearson"])
        assert len(set(pearsons)) == 2  # seeds differ, so mean and std are checked for real
        row = next(line for line in table.splitlines() if line.startswith(f"| 8 | {variant} |"))
        assert f"{statistics.mean(pearsons):.1f} ± {statistics.stdev(pearsons):.1f}" in row
    with open(os.path.join(experiment.output_dir, "scores.png"), "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"


def test_resuming_reruns_only_unfinished_runs(experiment):
    runs = list(experiment.glue_runs())
    finished = {run.directory: os.path.getmtime(os.path.join(run.directory, "metrics.json")) for run in runs}
    # A run that crashed: its directory is there, its metrics are not.
    os.remove(os.path.join(runs[1].directory, "metrics.json"))
    statuses = ExperimentRunner(experiment).run()
    assert statuses[runs[1].directory] == "done"
    assert {directory: status for directory, status in statuses.items() if directory != runs[1].directory} == {
        directory: "skipped" for directory in statuses if directory != runs[1].directory
    }
    for run in runs[:1] + runs[2:]:
        assert os.path.getmtime(os.path.join(run.directory, "metrics.json")) == finished[run.directory]


def test_the_example_spec_describes_the_real_grid():
    spec = ExperimentSpec.from_file(str(PROJECT_ROOT / "training_configs/experiments/minilm_glue.jsonnet"))
    assert [run.variant for run in spec.injection_runs()] == ["tft", "tft_simple"]
    # 3 variants x 2 recipes x 3 tasks x 2 sizes x 3 seeds
    assert len(list(spec.glue_runs())) == 108


def test_a_spec_with_an_unknown_variant_is_refused(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"output_dir": "x", "base_models": {"b": "m"}, "tasks": ["rte"],
                                "glue_dir": "g", "variants": ["none", "tft_large"]}))
    with pytest.raises(ConfigurationError, match="tft_large"):
        ExperimentSpec.from_file(str(path))
