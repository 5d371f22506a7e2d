import dataclasses
import json
from typing import Dict, List, Optional

import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError

from tests import CONFIGS_ROOT
from tft_allennlp.common.config_keys import (
    check_config_keys,
    closest,
    dataclass_settings,
    unknown_key_error,
)
from tft_experiments.spec import ExperimentSpec

TRAINING_CONFIGS = sorted(
    path for path in CONFIGS_ROOT.rglob("*.jsonnet") if "experiments" not in path.parts
)


@pytest.mark.parametrize("config", TRAINING_CONFIGS, ids=lambda p: str(p.relative_to(CONFIGS_ROOT)))
def test_every_key_of_every_config_is_read(config):
    check_config_keys(Params.from_file(str(config)).as_dict(quiet=True), str(config))


# (override, the message after "config: ")
TYPOS = [
    # AllenNLP's GradientDescentTrainer takes **kwargs: this one it ignores without a word.
    (
        {"trainer.num_epoch": 1},
        "unknown key 'trainer.num_epoch'; did you mean 'trainer.num_epochs'?",
    ),
    (
        {"trainer.optimizer.lrr": 0.1},
        "unknown key 'trainer.optimizer.lrr'; did you mean 'trainer.optimizer.lr'?",
    ),
    ({"model.dropoutt": 0.2}, "unknown key 'model.dropoutt'; did you mean 'model.dropout'?"),
    ({"random_seeed": 1}, "unknown key 'random_seeed'; did you mean 'random_seed'?"),
    (
        {"trainer.callbacks": [{"type": "console_logger", "should_log_input": False}]},
        "unknown key 'trainer.callbacks.0.should_log_input'; "
        "did you mean 'trainer.callbacks.0.should_log_inputs'?",
    ),
    (
        {"model.text_field_embedder.token_embedders.tokens.model_nam": "x"},
        "unknown key 'model.text_field_embedder.token_embedders.tokens.model_nam'; "
        "did you mean 'model.text_field_embedder.token_embedders.tokens.model_name'?",
    ),
]


@pytest.mark.parametrize("override, message", TYPOS)
def test_a_key_nothing_reads_is_named_with_the_closest_valid_one(override, message):
    params = Params.from_file(str(CONFIGS_ROOT / "glue/mrpc.jsonnet"), json.dumps(override))
    with pytest.raises(ConfigurationError) as error:
        check_config_keys(params.as_dict(quiet=True), "config")
    assert str(error.value) == f"config: {message}"


def test_a_key_unlike_any_lists_the_valid_ones():
    assert closest("zzzz", ["lr", "betas"]) is None
    assert str(unknown_key_error("zzzz", ["lr", "betas"], "where", "trainer.optimizer.")) == (
        "where: unknown key 'trainer.optimizer.zzzz'; valid keys there: betas, lr"
    )


@dataclasses.dataclass
class Settings:
    name: str
    seeds: List[int] = dataclasses.field(default_factory=list)
    sizes: List[Optional[int]] = dataclasses.field(default_factory=list)
    overrides: Dict[str, float] = dataclasses.field(default_factory=dict)
    rate: float = 0.5
    keep: bool = True


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"name": "a", "seedz": [1]}', "unknown key 'seedz'; did you mean 'seeds'?"),
        ('{"name": "a", "seeds": "1"}', "'seeds' must be a list of an integer, not \"1\""),
        (
            '{"name": "a", "seeds": [1, true]}',
            "'seeds' must be a list of an integer, not [1, true]",
        ),
        ('{"name": 3}', "'name' must be text, not 3"),
        ('{"name": "a", "keep": "yes"}', "'keep' must be true or false, not \"yes\""),
        ('{"name": "a", "overrides": {"x": "y"}}', "'overrides' must be an object of a number"),
        ("[1, 2]", "expected a JSON object of settings"),
    ],
)
def test_settings_of_a_file_are_checked_against_the_dataclass(tmp_path, text, message):
    path = tmp_path / "spec.json"
    path.write_text(text)
    with pytest.raises(ConfigurationError) as error:
        dataclass_settings(str(path), Settings)
    assert str(error.value).startswith(f"{path}: {message}")


def test_settings_of_the_right_types_pass(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text('{"name": "a", "seeds": [1], "sizes": [null, 100], "rate": 1, "keep": false}')
    assert dataclass_settings(str(path), Settings)["sizes"] == [None, 100]


def test_the_experiment_spec_names_an_unknown_key(tmp_path):
    path = tmp_path / "spec.json"
    spec = {"output_dir": "x", "base_models": {"b": "m"}, "tasks": ["rte"], "glue_dir": "g"}
    path.write_text(json.dumps({**spec, "glue_overides": {}}))
    with pytest.raises(ConfigurationError, match="did you mean 'glue_overrides'"):
        ExperimentSpec.from_file(str(path))
