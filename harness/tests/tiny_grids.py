"""
Helpers of several harness test files (imported by module name: harness/tests/ is no package, so
that its rootless modules and the plugin's `tests` package collect in one run): tiny specs, and a
run's metrics.
"""

import json
import os

from tests import FIXTURES_ROOT
from tft_experiments import ExperimentSpec


def glue_metrics(run):
    return json.loads(open(os.path.join(run.directory, "metrics.json")).read())


def tiny_strategy_spec(output_dir, **values):
    return ExperimentSpec(
        **{
            "output_dir": str(output_dir),
            "base_models": {"b": "m"},
            "tasks": ["sst2", "mrpc", "stsb"],
            "glue_dir": "g",
            "variants": ["none"],
            "train_sizes": [8],
            **values,
        }
    )


def cli_spec(directory, tiny_bert, **values):
    """Writes `directory/spec.json`, a grid of one MRPC run in `directory/grid`; its path."""
    spec = {
        "output_dir": str(directory / "grid"),
        "base_models": {"tiny": tiny_bert},
        "tasks": ["mrpc"],
        "glue_dir": str(FIXTURES_ROOT / "glue"),
        "variants": ["none"],
        "train_sizes": [8],
        "glue_overrides": {"trainer.num_epochs": 1, "data_loader.batch_size": 8},
        "keep_weights": False,
        **values,
    }
    path = directory / "spec.json"
    path.write_text(json.dumps(spec))
    return str(path)
