"""
Every `-o` override the README shows applies to its config as the README says: a dotted key
that a config lacks makes AllenNLP stop ("overrides dict contains unused keys"), and a nested
object replaces the whole block it names, silently dropping the rest of it.
"""

import json
import re

import pytest
from allennlp.common import Params
from allennlp.training.checkpointer import Checkpointer

from tests import CONFIGS_ROOT, PROJECT_ROOT

OVERRIDE = re.compile(r"-o '(\{.*?\})'")
CONFIG = re.compile(r"training_configs/(\S+\.jsonnet)")
# An override shown in prose, not in a command, holds for both config families.
BOTH_FAMILIES = ["glue/mrpc.jsonnet", "glue/stsb.jsonnet", "injection/tft.jsonnet"]


def readme_overrides():
    """`(README line, override, configs)` for every `-o` of the README."""
    text = (PROJECT_ROOT / "README.md").read_text()
    # A command continued with a backslash counts as one line.
    lines = text.replace("\\\n", " ").splitlines()
    found = []
    for number, line in enumerate(lines, start=1):
        for override in OVERRIDE.findall(line):
            configs = CONFIG.findall(line) if "allennlp train" in line else []
            found.append((number, override.replace(": N}", ": 10}"), configs or BOTH_FAMILIES))
    return found


def flatten(params, prefix=""):
    if not isinstance(params, dict):
        return {prefix: params}
    return {
        key: value
        for name, child in params.items()
        for key, value in flatten(child, f"{prefix}{name}.").items()
    }


def test_the_readme_shows_overrides():
    shown = {override for _, override, _ in readme_overrides()}
    assert '{"trainer.checkpointer.save_every_num_seconds": 1800}' in shown
    assert len(shown) >= 6


@pytest.mark.parametrize("number, override, configs", readme_overrides())
def test_readme_override_applies_to_its_config(number, override, configs, tmp_path):
    changes = flatten(json.loads(override))
    for config in configs:
        path = str(CONFIGS_ROOT / config)
        before = flatten(Params.from_file(path).as_dict(quiet=True))
        after = flatten(Params.from_file(path, override).as_dict(quiet=True))
        where = f"README line {number}, {config}"
        assert {key: after[key] for key in changes} == changes, where
        assert {key: value for key, value in after.items() if key not in changes} == {
            key: value for key, value in before.items() if key not in changes
        }, where
        # The trainer part AllenNLP builds first takes it (the checkpointer, on its own).
        checkpointer = Params.from_file(path, override).pop("trainer").pop("checkpointer")
        Checkpointer.from_params(checkpointer, serialization_dir=str(tmp_path))
