"""
Model archives as untrusted input (`tft_allennlp.common.untrusted_archives`): every kind of
malicious config, meta.json and weights file is refused with a message naming the archive and
the member, key or tensor, before anything is built or run (the members themselves:
`archive_extraction_test.py`). The fault campaign's "untrusted archives"
family (tests/fault_cases.py) runs each kind under every command that opens an archive.
"""

import json
import os
import pickle
import subprocess
import sys

import pytest
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.models.archival import load_archive
from allennlp.nn import util as nn_util

from tests import PROJECT_ROOT
from tests.common.tar_members import file_member, write_tar
from tft_allennlp.common.transformer_source import POOLER_FILE, load_archived_pooler
from tft_allennlp.common.untrusted_archives import (
    ArchiveMeta,
    UntrustedArchiveError,
    check_base_models,
    check_state,
    load_weights,
    read_archive_config,
    read_json_member,
)

GOOD_CONFIG = {
    "dataset_reader": {"type": "tft_glue", "task": "mrpc"},
    "model": {
        "type": "tft_glue_classifier",
        "text_field_embedder": {
            "token_embedders": {"tokens": {"type": "tft_pretrained_transformer", "model_name": "m"}}
        },
    },
    "data_loader": {"batch_sampler": {"type": "bucket", "batch_size": 8}},
    "trainer": {"callbacks": [{"type": "console_logger"}, {"type": "tft_rng_checkpoint"}]},
}


def _config(folder: str) -> dict:
    return read_archive_config(os.path.join(folder, "config.json"))


def _config_folder(tmp_path, config) -> str:
    folder = tmp_path / "run"
    folder.mkdir()
    text = config if isinstance(config, str) else json.dumps(config)
    (folder / "config.json").write_text(text)
    return str(folder)


def _with(path: str, value):
    config = json.loads(json.dumps(GOOD_CONFIG))
    *keys, last = path.split(".")
    node = config
    for key in keys:
        node = node[int(key)] if isinstance(node, list) else node[key]
    node[int(last) if isinstance(node, list) else last] = value
    return config


def test_a_config_of_registered_components_is_accepted(tmp_path):
    assert _config(_config_folder(tmp_path, GOOD_CONFIG)) == GOOD_CONFIG


@pytest.mark.parametrize(
    "path, value, message",
    [
        ("dataset_reader.type", "os.system", "dataset_reader.type 'os.system' is not a registered"),
        (
            "trainer.callbacks.1",
            {"type": "subprocess.run", "args": ["true"]},
            "trainer.callbacks[1].type 'subprocess.run' is not a registered",
        ),
        (
            "model.text_field_embedder.token_embedders.tokens.transformer_kwargs",
            {"trust_remote_code": True},
            "model.text_field_embedder.token_embedders.tokens.transformer_kwargs.trust_remote_code"
            " is true",
        ),
    ],
)
def test_a_config_that_would_run_code_is_refused(tmp_path, path, value, message):
    folder = _config_folder(tmp_path, _with(path, value))
    with pytest.raises(UntrustedArchiveError) as error:
        _config(folder)
    assert str(error.value).startswith(f"{folder}/config.json: refused: {message}")


def test_a_jsonnet_config_is_refused_before_it_is_evaluated(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("password")
    folder = _config_folder(tmp_path, '{"model": {"leak": importstr "%s"}}' % secret)
    with pytest.raises(UntrustedArchiveError, match="config.json: refused: not plain JSON"):
        _config(folder)


def test_load_archive_builds_nothing_of_a_config_that_runs_code(tmp_path):
    """A serialization directory from elsewhere, loaded as `predict` loads one."""
    marker = tmp_path / "ran"
    folder = _config_folder(
        tmp_path, _with("dataset_reader", {"type": "os.system", "command": f"touch {marker}"})
    )
    torch.save({}, os.path.join(folder, "best.th"))
    with pytest.raises(UntrustedArchiveError, match="'os.system' is not a registered component"):
        load_archive(folder)
    assert not marker.exists()


class _Pickled:
    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def test_pickled_code_is_refused_even_when_torch_is_told_to_trust(tmp_path, monkeypatch):
    marker = tmp_path / "ran"
    weights = tmp_path / "weights.th"
    weights.write_bytes(pickle.dumps(_Pickled(f"touch {marker}"), protocol=2))
    # The variable makes torch.load unpickle anything where the caller leaves weights_only unset.
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(UntrustedArchiveError) as error:
        load_weights(str(weights))
    assert str(error.value).startswith(f"{weights}: refused: it holds a Python object (posix.sys")
    assert not marker.exists()


def test_a_weights_file_that_is_no_weights_is_named(tmp_path):
    weights = tmp_path / "best.th"
    weights.write_text("just text")
    with pytest.raises(ConfigurationError, match=f"{weights}: "):
        load_weights(str(weights))


def test_allennlp_reads_state_dicts_through_the_guard_with_its_own_semantics(tmp_path):
    path = tmp_path / "w.th"
    one, two = torch.ones(2), torch.zeros(3)
    torch.save({"model.a": one, "model.b": two, "head.c": one}, path)
    state = nn_util.read_state_dict(path, strip_prefix="model.", ignore=["head\\."])
    assert list(state) == ["a", "b"]
    assert torch.equal(state["a"], one) and torch.equal(state["b"], two)
    with pytest.raises(ValueError, match="'strip_prefix' of 'x.' was never used"):
        nn_util.read_state_dict(path, strip_prefix="x.")
    with pytest.raises(ValueError, match="'ignore' pattern 'zzz' didn't have any matches"):
        nn_util.read_state_dict(path, ignore=["zzz"])
    assert list(nn_util.read_state_dict(path, ignore=["zzz"], strict=False)) == [
        "model.a",
        "model.b",
        "head.c",
    ]
    path.write_bytes(pickle.dumps(_Pickled("true"), protocol=2))
    with pytest.raises(UntrustedArchiveError, match="w.th: refused"):
        nn_util.read_state_dict(path)


def test_the_command_line_says_one_line_and_fails(tmp_path):
    """`allennlp predict` of a malicious archive, in a real process: one line, exit 1."""
    outside = tmp_path / "outside"
    outside.mkdir()
    archive = write_tar(tmp_path / "model.tar.gz", [file_member(f"{outside}/x")])
    (tmp_path / "in.jsonl").write_text('{"sentence1": "a", "sentence2": "b"}\n')
    result = subprocess.run(
        [sys.executable, "-m", "allennlp", "predict", archive, str(tmp_path / "in.jsonl")],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    (line,) = result.stderr.strip().splitlines()
    message, log = line.split(" (traceback: ")
    assert message == (
        f"error: {archive}: refused: member '{outside}/x' has an absolute path; a model archive "
        "may hold only files, folders and links inside itself, so nothing was extracted "
        "(docs/security.md)"
    )
    os.remove(log.rstrip(")"))  # the traceback, for a bug report
    assert os.listdir(outside) == []


@pytest.mark.parametrize(
    "text, problem",
    [
        ('{"a": NaN}', "not plain JSON (NaN is not a JSON value)"),
        ('{"a": -Infinity}', "not plain JSON (-Infinity is not a JSON value)"),
        ('{"a": 1, "b": {"c": 1, "c": 2}}', "not plain JSON (the key 'c' twice in one object)"),
        ('{"a": "x', "not plain JSON (Unterminated string starting at"),
        ('{"dropout": -1e999}', "not plain JSON (-1e999 is too large a number)"),
        ("[" * 65 + "]" * 65, "nested more than 64 deep"),
        ("[" * 200_000 + "]" * 200_000, "nested more than 64 deep"),
        ('local x = 1; {"a": x}', "not plain JSON (Expecting value: line 1 column 1 (char 0))"),
    ],
)
def test_json_of_an_archive_is_read_strictly_as_data(tmp_path, text, problem):
    path = tmp_path / "config.json"
    path.write_text(text)
    with pytest.raises(UntrustedArchiveError) as error:
        read_json_member(str(path))
    assert str(error.value).startswith(f"{path}: refused: {problem}")


def test_json_at_the_bounds_is_read(tmp_path):
    path = tmp_path / "config.json"
    path.write_text("[" * 64 + "]" * 64)
    assert read_json_member(str(path)) is not None
    path.write_text(json.dumps({"a": "x" * 100}))
    with pytest.raises(UntrustedArchiveError, match="refused: 109 bytes, more than the 100 an"):
        read_json_member(str(path), max_bytes=100)
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(UntrustedArchiveError, match="refused: not plain JSON \\('utf-8' codec"):
        read_json_member(str(path))


def test_a_config_that_is_no_object_is_refused(tmp_path):
    folder = _config_folder(tmp_path, "[1, 2]")
    with pytest.raises(UntrustedArchiveError, match="config.json: refused: a JSON list, not the"):
        _config(folder)


def test_a_jsonnet_config_is_never_evaluated_by_load_archive(tmp_path, monkeypatch):
    """Exponential work and reads of files and variables: jsonnet would hang or leak."""
    monkeypatch.setenv("TFT_SECRET", "s3cret-value")
    (tmp_path / "secret.txt").write_text("password-in-file")
    program = (
        "local f(n) = if n == 0 then 1 else f(n - 1) + f(n - 1);\n"
        '{"model": {"x": f(80), "y": importstr "%s", "z": std.extVar("TFT_SECRET")}}'
        % (tmp_path / "secret.txt")
    )
    folder = _config_folder(tmp_path, program)
    torch.save({}, os.path.join(folder, "best.th"))
    with pytest.raises(UntrustedArchiveError) as error:
        load_archive(folder)
    assert str(error.value).startswith(f"{folder}/config.json: refused: not plain JSON")
    assert "password" not in str(error.value) and "s3cret" not in str(error.value)


@pytest.mark.parametrize(
    "text, problem",
    [
        ('{"version": ', "not plain JSON"),
        ('["2.10.1"]', "not AllenNLP's meta.json"),
        ('{"version": "2.10.1", "run": "x"}', "not AllenNLP's meta.json"),
        ('{"version": 2}', "not AllenNLP's meta.json"),
    ],
)
def test_a_meta_json_that_is_not_allennlps_is_refused(tmp_path, text, problem):
    path = tmp_path / "meta.json"
    path.write_text(text)
    with pytest.raises(UntrustedArchiveError) as error:
        ArchiveMeta.from_path(str(path))
    assert str(error.value).startswith(f"{path}: refused: {problem}")
    path.write_text('{"version": "2.10.1"}')
    assert ArchiveMeta.from_path(str(path)).version == "2.10.1"


class _Tiny(torch.nn.Module):
    authorized_missing_keys = [r"^optional\."]

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(3, 2)
        self.register_buffer("ids", torch.arange(3))
        self.optional = torch.nn.Linear(1, 1)


def _state(**changes) -> dict:
    state = {"linear.weight": torch.ones(2, 3), "linear.bias": torch.zeros(2)}
    state.update({"ids": torch.arange(3), "optional.weight": torch.ones(1, 1)})
    state.update({"optional.bias": torch.ones(1)})
    for key, value in changes.items():
        key = key.replace("__", ".")
        if value is None:
            del state[key]
        else:
            state[key] = value
    return state


@pytest.mark.parametrize(
    "changes, problem",
    [
        ({"linear__weight": torch.ones(3, 2)}, "tensor 'linear.weight' has shape [3, 2], the "),
        (
            {"linear__weight": torch.ones(2, 3, dtype=torch.int8)},
            "tensor 'linear.weight' is torch.int8, the model's torch.float32; it would be cast",
        ),
        (
            {"ids": torch.arange(3.0)},
            "tensor 'ids' is torch.float32, the model's torch.int64; it would be cast",
        ),
        ({"extra": torch.ones(1), "more": torch.ones(1)}, "tensor 'extra' (and 1 more) is none"),
        ({"linear__bias": None}, "no tensor 'linear.bias', which the model has"),
    ],
)
def test_weights_that_do_not_fit_the_model_are_refused(changes, problem):
    with pytest.raises(UntrustedArchiveError) as error:
        check_state(_Tiny(), _state(**changes), "m.tar.gz (weights.th)")
    assert str(error.value).startswith(f"m.tar.gz (weights.th): refused: {problem}")


def test_weights_that_fit_pass_with_authorized_gaps_and_lossless_widths():
    # float64 values and int32 ids are of the model's kinds; optional.* may be missing.
    state = _state(optional__weight=None, optional__bias=None)
    state.update({"linear.bias": torch.zeros(2, dtype=torch.float64), "ids": torch.arange(3).int()})
    check_state(_Tiny(), state, "w.th")


@pytest.mark.parametrize(
    "value, problem",
    [
        (float("nan"), "tensor 'b' holds NaN or infinite values"),
        (float("-inf"), "tensor 'b' holds NaN or infinite values"),
    ],
)
def test_weights_with_values_that_are_not_finite_are_refused(tmp_path, value, problem):
    path = tmp_path / "weights.th"
    torch.save({"a": torch.ones(2), "b": torch.tensor([0.0, value])}, path)
    with pytest.raises(UntrustedArchiveError) as error:
        load_weights(str(path))
    assert str(error.value) == f"{path}: refused: {problem}"


@pytest.mark.parametrize(
    "content, problem",
    [
        ([1, 2], "holds a list, not a mapping of tensor names to tensors"),
        ({"a": 1.5}, "entry 'a' is a float, not a tensor"),
    ],
)
def test_weights_that_are_no_mapping_of_tensors_are_refused(tmp_path, content, problem):
    path = tmp_path / "weights.th"
    torch.save(content, path)
    with pytest.raises(UntrustedArchiveError) as error:
        load_weights(str(path))
    assert str(error.value) == f"{path}: refused: {problem}"


def test_a_pooler_file_with_a_lying_header_is_refused(tmp_path):
    pooler = torch.nn.Linear(4, 4)
    header = json.dumps(
        {"weight": {"dtype": "F32", "shape": [1000, 1000], "data_offsets": [0, 4_000_000]}}
    ).encode()
    (tmp_path / POOLER_FILE).write_bytes(len(header).to_bytes(8, "little") + header + bytes(16))
    with pytest.raises(UntrustedArchiveError) as error:
        load_archived_pooler(str(tmp_path), pooler)
    assert str(error.value).startswith(f"{tmp_path / POOLER_FILE}: refused: not a safetensors")


def test_a_pooler_file_that_fits_is_loaded(tmp_path):
    from safetensors.torch import save_file

    source, target = torch.nn.Linear(4, 4), torch.nn.Linear(4, 4)
    save_file(dict(source.state_dict()), str(tmp_path / POOLER_FILE))
    assert load_archived_pooler(str(tmp_path), target)
    assert torch.equal(target.weight, source.weight)
    save_file({"weight": torch.ones(4, 3), "bias": torch.ones(4)}, str(tmp_path / POOLER_FILE))
    with pytest.raises(UntrustedArchiveError, match="tensor 'weight' has shape \\[4, 3\\]"):
        load_archived_pooler(str(tmp_path), target)
    assert not load_archived_pooler(str(tmp_path / "none"), target)


def _base_copy(tmp_path, **config) -> str:
    """A serialization directory with a copy of a base checkpoint's config (as an archive has)."""
    from transformers import BertConfig

    copy = tmp_path / "run" / "pretrained_transformers" / "bert-0123"
    copy.mkdir(parents=True)
    BertConfig(**config).to_json_file(str(copy / "config.json"))
    return str(tmp_path / "run")


def test_a_base_config_of_more_parameters_than_the_weights_hold_is_refused(tmp_path):
    # Width 4, no layers: embeddings of V words, 16 positions and 2 types (V x 4 + 64 + 8), their
    # norm (8), the pooler (4 x 4 + 4): 4V + 100 parameters, against weights of 1,000 values, of
    # which the model may have twice as many (the weights lack the pooler the model drops).
    sizes = dict(hidden_size=4, num_hidden_layers=0, num_attention_heads=1, intermediate_size=4)
    sizes.update(max_position_embeddings=16, type_vocab_size=2)
    fits = _base_copy(tmp_path / "fits", vocab_size=475, **sizes)  # 2,000 parameters
    check_base_models(fits, 1_000)
    folder = _base_copy(tmp_path / "bomb", vocab_size=476, **sizes)  # 2,004
    with pytest.raises(UntrustedArchiveError) as error:
        check_base_models(folder, 1_000)
    assert str(error.value).startswith(
        f"{folder}/pretrained_transformers/bert-0123/config.json: refused: describes a model of "
        "2,004 parameters, more than twice the 1,000 values of its weights"
    )


def test_a_base_config_transformers_cannot_build_is_refused(tmp_path):
    folder = _base_copy(tmp_path)
    config = folder + "/pretrained_transformers/bert-0123/config.json"
    with open(config, "w") as handle:
        json.dump({"model_type": "nope"}, handle)
    with pytest.raises(UntrustedArchiveError, match="config.json: refused: not the config of a"):
        check_base_models(folder, 1_000)


def test_an_archive_without_its_base_models_files_names_no_path_to_read(tmp_path):
    from tft_allennlp.common.transformer_source import transformer_source

    folder = tmp_path / "archive"
    folder.mkdir()
    (folder / "weights.th").write_bytes(b"")  # an extracted archive: it holds weights.th
    with pytest.raises(UntrustedArchiveError) as error:
        transformer_source("/home/user/secret-model", str(folder))
    assert str(error.value).startswith(
        f"{folder}/config.json: refused: names the model '/home/user/secret-model' but holds no "
        "copy of its files (pretrained_transformers/)"
    )
