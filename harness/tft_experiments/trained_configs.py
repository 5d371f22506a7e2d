"""
What a run's config says it trains, and its fingerprint.

Two configs train the same run when they are the same once `trained_config` has left out what
changes nothing trained: the trainer callbacks that only write records
(`RECORD_ONLY_CALLBACKS`), how the archive stores the encoder, and a vocabulary section that
declares no more than the task's own labels (a grid made before either changed its configs
trained the same models). `config_fingerprint` hashes that config with the paths inside the
grid's output directory written relative to it, so that one run of two grids (or of one grid on
two machines) has one fingerprint: `reuse.py` compares it, and each grid's table of finished
runs (`table.py`) records it.
"""

import hashlib
import json
import os
from typing import Any, Dict

from allennlp.common.checks import ConfigurationError

from tft_allennlp.common.glue_tasks import resolve_task

# Trainer callbacks that write a record of the run and change nothing it trains.
RECORD_ONLY_CALLBACKS = {"tft_parameter_counts"}
# The tokenizer and indexer type that also copies the checkpoint's files into the archive.
ARCHIVING_TRANSFORMER = "tft_pretrained_transformer"
# What a path inside the grid's output directory becomes in `config_fingerprint`.
GRID_PLACEHOLDER = "<output_dir>"


def config_fingerprint(config: Dict[str, Any], grid: str) -> str:
    """
    The SHA-256 of `trained_config(config)` (JSON, keys sorted) where every string that is a
    path inside `grid` (the output directory of the run's grid) reads `<output_dir>/RELATIVE`.
    """
    relative = _grid_relative(trained_config(config), os.path.abspath(grid))
    return hashlib.sha256(json.dumps(relative, sort_keys=True).encode()).hexdigest()


def _grid_relative(value: Any, root: str) -> Any:
    if isinstance(value, dict):
        return {key: _grid_relative(item, root) for key, item in value.items()}
    if isinstance(value, list):
        return [_grid_relative(item, root) for item in value]
    if isinstance(value, str):
        absolute = os.path.abspath(value)
        if absolute != root and absolute.startswith(root + os.sep):
            return f"{GRID_PLACEHOLDER}/{os.path.relpath(absolute, root)}"
    return value


def trained_config(config: Dict[str, Any]) -> Dict[str, Any]:
    """
    `config` as far as it decides what the run trains: without the trainer callbacks of
    `RECORD_ONLY_CALLBACKS`, and without how the archive stores its encoder (`include_in_archive`;
    the `tft_pretrained_transformer` tokenizer and indexers, which tokenize as AllenNLP's
    `pretrained_transformer` ones and only also copy the checkpoint's files into the archive),
    and without a vocabulary section that declares no more than the task's own labels, which
    the model now puts into the vocabulary itself, in the same order.
    """
    config = {key: _storage_neutral(key, value) for key, value in config.items()}
    config.pop("include_in_archive", None)
    config = _without_task_labels(config)
    trainer = config.get("trainer", {})
    callbacks = trainer.get("callbacks")
    if not isinstance(callbacks, list):
        return config
    kept = [
        c for c in callbacks if not (isinstance(c, dict) and c.get("type") in RECORD_ONLY_CALLBACKS)
    ]
    return {**config, "trainer": {**trainer, "callbacks": kept}}


def _without_task_labels(config: Dict[str, Any]) -> Dict[str, Any]:
    """`config` without `vocabulary.tokens_to_add` where it holds exactly its task's labels."""
    vocabulary = config.get("vocabulary")
    task = config.get("model", {}).get("task")
    if not isinstance(vocabulary, dict) or "tokens_to_add" not in vocabulary or task is None:
        return config
    try:
        labels = list(resolve_task(task).labels or [])
    except ConfigurationError:
        return config
    if vocabulary["tokens_to_add"] != {"labels": labels}:
        return config
    vocabulary = {key: value for key, value in vocabulary.items() if key != "tokens_to_add"}
    return {**config, "vocabulary": vocabulary}


def _storage_neutral(key: str, value: Any) -> Any:
    """`value` (under `key`) with the archiving tokenizer and indexers named as AllenNLP's."""
    if not isinstance(value, dict):
        return value
    if key == "tokenizer":
        return _as_allennlp_transformer(value)
    if key == "token_indexers":
        return {name: _as_allennlp_transformer(indexer) for name, indexer in value.items()}
    return {inner: _storage_neutral(inner, item) for inner, item in value.items()}


def _as_allennlp_transformer(component: Any) -> Any:
    if isinstance(component, dict) and component.get("type") == ARCHIVING_TRANSFORMER:
        return {**component, "type": "pretrained_transformer"}
    return component
