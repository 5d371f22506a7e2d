"""
Model archives as untrusted input (`tft_allennlp.common.untrusted_archives`): every kind of
malicious member, config and weights file is refused with a message naming the archive and the
member or key, before anything is written or run. The fault campaign's "untrusted archives"
family (tests/fault_cases.py) runs each kind under every command that opens an archive.
"""

import io
import json
import os
import pickle
import subprocess
import sys
import tarfile
from typing import List, Optional, Tuple

import pytest
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.models.archival import load_archive
from allennlp.nn import util as nn_util

from tests import PROJECT_ROOT
from tft_allennlp.common.untrusted_archives import (
    UntrustedArchiveError,
    check_archive_config,
    extract_archive,
    load_weights,
    member_problem,
)

Member = Tuple[tarfile.TarInfo, Optional[bytes]]


def _file(name: str, data: bytes = b"data\n") -> Member:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _entry(name: str, kind: bytes, target: str = "") -> Member:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, None


def _write_tar(path, members: List[Member]) -> str:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return str(path)


@pytest.mark.parametrize(
    "member, problem",
    [
        (_file("config.json"), None),
        (_file("./vocabulary/labels.txt"), None),
        (_entry("vocabulary", tarfile.DIRTYPE), None),
        (_entry("weights.th", tarfile.SYMTYPE, "best/weights.th"), None),
        (_entry("copy.json", tarfile.LNKTYPE, "config.json"), None),
        (_file("/etc/cron.d/x"), "has an absolute path"),
        (_file("a/../../x"), "has '..' in its path"),
        (_file("..\\x"), "has '..' in its path"),
        (_entry("l", tarfile.SYMTYPE, "/home"), "is a symbolic link to the absolute path '/home'"),
        (_entry("l", tarfile.SYMTYPE, "a/../.."), "is a symbolic link to 'a/../..', out of its"),
        (_entry("h", tarfile.LNKTYPE, "/etc/passwd"), "is a hard link to the absolute path"),
        (_entry("h", tarfile.LNKTYPE, "../x"), "is a hard link to '../x', out of its folder"),
        (_entry("disk", tarfile.BLKTYPE), "is a device file"),
        (_entry("null", tarfile.CHRTYPE), "is a device file"),
        (_entry("pipe", tarfile.FIFOTYPE), "is a named pipe"),
        (_entry("odd", b"X"), "is not a file, folder or link (tar type b'X')"),
    ],
)
def test_every_kind_of_member_is_judged(member, problem):
    found = member_problem(member[0])
    assert found == problem if problem is None else found.startswith(problem), found


def _escapes(outside) -> List[Tuple[str, List[Member]]]:
    up = "../" * 40 + str(outside).lstrip("/")
    return [
        ("'..' path", [_file(f"{up}/dotdot.txt")]),
        ("absolute path", [_file(f"{outside}/absolute.txt")]),
        ("symlink, then a file", [_entry("l", tarfile.SYMTYPE, str(outside)), _file("l/x.txt")]),
        (
            "hard link, then its file",
            [_entry("v", tarfile.LNKTYPE, str(outside / "victim.txt")), _file("v", b"over\n")],
        ),
        ("named pipe", [_entry("pipe", tarfile.FIFOTYPE)]),
        ("device", [_entry("null", tarfile.CHRTYPE)]),
    ]


@pytest.mark.parametrize("kind", range(6))
def test_a_malicious_archive_is_refused_with_nothing_written(tmp_path, kind):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("mine\n")
    name, members = _escapes(outside)[kind]
    # The refused member comes after good ones: those must not be extracted either.
    archive = _write_tar(tmp_path / "model.tar.gz", [_file("config.json"), *members])
    target = tmp_path / "extracted"
    target.mkdir()
    with pytest.raises(UntrustedArchiveError) as error:
        extract_archive(archive, str(target))
    message = str(error.value)
    assert message.startswith(f"{archive}: refused: member {members[0][0].name!r}"), name
    assert "\n" not in message
    assert os.listdir(target) == []
    assert sorted(os.listdir(outside)) == ["victim.txt"]
    assert (outside / "victim.txt").read_text() == "mine\n"


def test_load_archive_refuses_before_it_extracts(tmp_path):
    """AllenNLP's own `load_archive`, as `predict` and `evaluate` call it, is guarded."""
    outside = tmp_path / "outside"
    outside.mkdir()
    escape = "../" * 40 + str(outside).lstrip("/") + "/x"
    archive = _write_tar(tmp_path / "m.tar.gz", [_file(escape)])
    with pytest.raises(UntrustedArchiveError, match="m.tar.gz: refused: member"):
        load_archive(archive)
    assert os.listdir(outside) == []


def test_a_good_archive_extracts_whole_with_its_links_inside(tmp_path):
    archive = _write_tar(
        tmp_path / "model.tar.gz",
        [
            _entry("vocabulary", tarfile.DIRTYPE),
            _file("vocabulary/labels.txt", b"0\n1\n"),
            _entry("labels.txt", tarfile.SYMTYPE, "vocabulary/labels.txt"),
            _entry("copy.txt", tarfile.LNKTYPE, "vocabulary/labels.txt"),
        ],
    )
    extract_archive(archive, str(tmp_path / "x"))
    for name in ("vocabulary/labels.txt", "labels.txt", "copy.txt"):
        assert (tmp_path / "x" / name).read_bytes() == b"0\n1\n"
    assert os.path.islink(tmp_path / "x/labels.txt")


def test_a_file_that_is_no_archive_is_named(tmp_path):
    path = tmp_path / "model.tar.gz"
    path.write_text("not a tar file")
    with pytest.raises(ConfigurationError, match="model.tar.gz: not a readable model archive"):
        extract_archive(str(path), str(tmp_path / "x"))


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
    assert check_archive_config(_config_folder(tmp_path, GOOD_CONFIG)) == GOOD_CONFIG


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
        check_archive_config(folder)
    assert str(error.value).startswith(f"{folder}/config.json: refused: {message}")


def test_a_jsonnet_config_is_refused_before_it_is_evaluated(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("password")
    folder = _config_folder(tmp_path, '{"model": {"leak": importstr "%s"}}' % secret)
    with pytest.raises(UntrustedArchiveError, match="config.json: refused: not plain JSON"):
        check_archive_config(folder)


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
    archive = _write_tar(tmp_path / "model.tar.gz", [_file(f"{outside}/x")])
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
