"""
Every `-o` override the README and docs/ show applies to its config as they say: a dotted key
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
# Any `-o` followed by a quote: what a reader may copy, tested or not.
SHOWN = re.compile(r"-o ['\"]")
CONFIG = re.compile(r"training_configs/(\S+\.jsonnet)")
# An override shown in prose, not in a command, holds for both config families.
BOTH_FAMILIES = ["glue/mrpc.jsonnet", "glue/stsb.jsonnet", "injection/tft.jsonnet"]
DOCUMENTS = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]


def document_lines(document):
    """The document's lines, a command continued with a backslash counting as one line."""
    return document.read_text().replace("\\\n", " ").splitlines()


def documented_overrides():
    """`(where, override, configs)` for every `-o` of the README and docs/."""
    found = []
    for document in DOCUMENTS:
        name = document.relative_to(PROJECT_ROOT).as_posix()
        for number, line in enumerate(document_lines(document), start=1):
            for override in OVERRIDE.findall(line):
                command = "allennlp train" in line or "allennlp tft-tune" in line
                configs = CONFIG.findall(line) if command else []
                override = override.replace(": N}", ": 10}")
                found.append((f"{name} line {number}", override, configs or BOTH_FAMILIES))
    return found


def flatten(params, prefix=""):
    if not isinstance(params, dict):
        return {prefix: params}
    return {
        key: value
        for name, child in params.items()
        for key, value in flatten(child, f"{prefix}{name}.").items()
    }


def test_every_override_shown_is_tested():
    found = documented_overrides()
    for document in DOCUMENTS:
        name = document.relative_to(PROJECT_ROOT).as_posix()
        shown = sum(len(SHOWN.findall(line)) for line in document_lines(document))
        tested = sum(where.startswith(f"{name} line ") for where, _, _ in found)
        assert tested == shown, f"{name}: {shown} -o shown, {tested} parsed and tested"
    assert {override for _, override, _ in found} == {
        '{"dataset_reader.train_size": 1000, "random_seed": 1, "numpy_seed": 1, "pytorch_seed": 1}',
        '{"dataset_reader.train_size": 1000}',
        '{"dataset_reader.train_size": 1000, "trainer.optimizer.lr": 4.2e-05}',
        '{"train_data_path": "glue_hf/rte/train", '
        '"validation_data_path": "glue_hf/rte/validation"}',
        '{"data_loader.max_instances_in_memory": 50000}',
        '{"validation_data_loader.bucket_batches": 0}',
        '{"data_loader.batches_per_epoch": 10}',
        '{"trainer.checkpointer.save_every_num_seconds": 1800}',
        '{"trainer.precision": "float16"}',
        '{"trainer.checkpointer.keep_most_recent_by_count": null}',
        '{"trainer.optimizer.fused": false}',
        '{"distributed": null}',
        '{"trainer.type": "tft_mixed_precision",    "trainer.precision": "bfloat16", '
        '"trainer.onednn_cache_capacity": 64,    "trainer.reuse_freed_memory": true, '
        '"model.text_field_embedder.token_embedders.tokens.attention":    "eager", '
        '"model.text_field_embedder.token_embedders.tokens.packed_dropout": true}',
    }


@pytest.mark.parametrize("where, override, configs", documented_overrides())
def test_documented_override_applies_to_its_config(where, override, configs, tmp_path):
    changes = flatten(json.loads(override))
    for config in configs:
        path = str(CONFIGS_ROOT / config)
        before = flatten(Params.from_file(path).as_dict(quiet=True))
        after = flatten(Params.from_file(path, override).as_dict(quiet=True))
        context = f"{where}, {config}"
        assert {key: after[key] for key in changes} == changes, context
        assert {key: value for key, value in after.items() if key not in changes} == {
            key: value for key, value in before.items() if key not in changes
        }, context
        # The trainer part AllenNLP builds first takes it (the checkpointer, on its own).
        checkpointer = Params.from_file(path, override).pop("trainer").pop("checkpointer")
        Checkpointer.from_params(checkpointer, serialization_dir=str(tmp_path))
