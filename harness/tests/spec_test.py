import json

import pytest
from allennlp.common.checks import ConfigurationError

from tft_experiments import ExperimentSpec

SETTINGS = {
    "output_dir": "out",
    "base_models": {"b": "m"},
    "tasks": ["rte"],
    "glue_dir": "g",
    "variants": ["none"],
}


@pytest.mark.parametrize(
    "values, message",
    [
        ({"tasks": []}, "'tasks' is empty"),
        ({"tasks": ["rte", "rte"]}, "'tasks' gives \"rte\" twice"),
        ({"train_sizes": [-8]}, "'train_sizes' must hold positive integers .* not -8"),
        ({"train_sizes": [0]}, "'train_sizes' must hold positive integers .* not 0"),
        ({"train_sizes": [8, None, None]}, "'train_sizes' gives null twice"),
        ({"train_sizes": [True]}, "'train_sizes' must hold positive integers .* not true"),
        ({"seeds": [-1]}, "'seeds' must hold integers from 0 to 4294967295 .* not -1"),
        ({"seeds": [2**32]}, "'seeds' must hold integers from 0 .* not 4294967296"),
        ({"seeds": [1, 2, 1]}, "'seeds' gives 1 twice"),
        ({"sweep_seeds": []}, "'sweep_seeds' is empty"),
        ({"sweep_seeds": [1.5]}, "'sweep_seeds' must hold integers .* not 1.5"),
        ({"injection_seed": -2}, "'injection_seed' must hold integers .* not -2"),
        ({"injection_seeds": [3, 3]}, "injection_seeds must be distinct"),
        ({"retries": -1}, "'retries' must be 0 or more, not -1"),
        ({"variants": []}, "'variants' is empty"),
        ({"base_variants": {"b": []}}, "'base_variants.b' is empty"),
        ({"strategies": ["cross", "cross"]}, "'strategies' gives \"cross\" twice"),
        (
            {"tasks": ["cola", "mrpc"], "strategies": ["siamese_softmax"]},
            r"No strategy of 'strategies' \['siamese_softmax'\] applies to the tasks \['cola'\]",
        ),
    ],
)
def test_a_spec_whose_grid_no_run_could_take_is_refused_naming_the_key(values, message):
    with pytest.raises(ConfigurationError, match=message):
        ExperimentSpec(**{**SETTINGS, **values})


def test_a_spec_files_errors_start_with_its_path(tmp_path):
    path = tmp_path / "grid.json"
    path.write_text(json.dumps({**SETTINGS, "train_sizes": [1000, -8]}))
    with pytest.raises(ConfigurationError) as refused:
        ExperimentSpec.from_file(str(path))
    assert str(refused.value) == (
        f"{path}: 'train_sizes' must hold positive integers (or null, the whole training file), "
        "not -8."
    )
    path.write_text(json.dumps({**SETTINGS, "variants": ["none", "tft_large"]}))
    with pytest.raises(ConfigurationError, match=f"^{path}: Unknown variants \\['tft_large'\\]"):
        ExperimentSpec.from_file(str(path))


def test_a_grid_of_whole_files_sizes_and_seeds_is_accepted():
    spec = ExperimentSpec(**SETTINGS, train_sizes=[None, 8], seeds=[0, 2**32 - 1], retries=0)
    assert [(run.train_size, run.seed) for run in spec.glue_runs()] == [
        (None, 0),
        (8, 0),
        (None, 2**32 - 1),
        (8, 2**32 - 1),
    ]


def test_a_spec_with_an_unknown_variant_is_refused(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(
        json.dumps(
            {
                "output_dir": "x",
                "base_models": {"b": "m"},
                "tasks": ["rte"],
                "glue_dir": "g",
                "variants": ["none", "tft_large"],
            }
        )
    )
    with pytest.raises(ConfigurationError, match="tft_large"):
        ExperimentSpec.from_file(str(path))
