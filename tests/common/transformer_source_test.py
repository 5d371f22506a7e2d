"""
`tft_allennlp.common.transformer_source` reads a model archive given as `model_name` through the
reader that the archives package plugs in (the encoder cache), and names the archive if none is;
a checkpoint that needs its own code is refused.
"""

import json

import pytest
from allennlp.common.checks import ConfigurationError

import tft_allennlp  # noqa: F401  (plugs the archives package in, as `allennlp` does)
from tft_allennlp.archives.encoder_cache import exported_encoder
from tft_allennlp.common import transformer_source


def test_a_model_archive_is_read_through_the_encoder_cache(tmp_path, monkeypatch):
    assert transformer_source._model_archive_reader is exported_encoder
    archive = tmp_path / "model.tar.gz"
    archive.write_bytes(b"an archive")
    read = []
    # The reader returns the exported encoder's directory.
    monkeypatch.setattr(
        transformer_source, "_model_archive_reader", lambda a: read.append(a) or str(tmp_path)
    )
    transformer_source.transformer_source(str(archive))
    assert read == [str(archive)]


def test_without_a_reader_a_model_archive_is_named(tmp_path, monkeypatch):
    archive = tmp_path / "model.tar.gz"
    archive.write_bytes(b"an archive")
    monkeypatch.setattr(transformer_source, "_model_archive_reader", None)
    with pytest.raises(ConfigurationError, match="model.tar.gz: a model archive as model_name"):
        transformer_source.transformer_source(str(archive))


def test_a_model_name_that_names_nothing_is_refused_before_transformers(tmp_path, monkeypatch):
    monkeypatch.setenv("TFT_MODEL", " ")
    with pytest.raises(ConfigurationError) as error:
        transformer_source.transformer_source(" ")
    assert str(error.value).startswith("the model name is empty (TFT_MODEL is set, and empty)")
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(ConfigurationError) as error:
        transformer_source.transformer_source(str(loop))
    assert str(error.value).startswith(f"{loop}: a symbolic link that leads to no file or folder")


def test_a_checkpoint_that_needs_its_own_code_is_refused_in_one_line(tmp_path, monkeypatch):
    checkpoint = tmp_path / "custom"
    checkpoint.mkdir()
    config = {"model_type": "custom-bert", "auto_map": {"AutoModel": "modeling.Custom"}}
    (checkpoint / "config.json").write_text(json.dumps(config))
    with pytest.raises(ConfigurationError) as error:
        transformer_source.transformer_source(str(checkpoint))
    message = str(error.value)
    assert message.startswith(f"{checkpoint}: refused: its config.json maps ['AutoModel']")
    assert "runs only for a model named in TFT_TRUST_REMOTE_CODE" in message
    assert "\n" not in message
    # A tokenizer of its own code too.
    (checkpoint / "config.json").write_text(json.dumps({"model_type": "bert"}))
    tokenizer_config = {"auto_map": {"AutoTokenizer": ["tokenization.Custom", None]}}
    (checkpoint / "tokenizer_config.json").write_text(json.dumps(tokenizer_config))
    with pytest.raises(ConfigurationError, match="its tokenizer_config.json maps"):
        transformer_source.transformer_source(str(checkpoint))
    # Named, it is read as it is (tests/host_patches/remote_code_test.py loads one).
    monkeypatch.setenv("TFT_TRUST_REMOTE_CODE", f"other, {checkpoint}")
    assert transformer_source.transformer_source(str(checkpoint)) == str(checkpoint)
    monkeypatch.delenv("TFT_TRUST_REMOTE_CODE")
    # Without an auto_map the checkpoint is read as it is.
    (checkpoint / "tokenizer_config.json").write_text("{}")
    assert transformer_source.transformer_source(str(checkpoint)) == str(checkpoint)
