"""
`tft_host_patches.remote_code` and the plugin's refusal before it: a checkpoint with its own code
(`auto_map`) is refused in one line unless the user names it in `TFT_TRUST_REMOTE_CODE`, a local
folder or a hub name alike; a named one loads with its code, through AllenNLP's components that
never pass `trust_remote_code`; transformers never asks on the terminal; and an archive never
runs code, whatever the variable names.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.tiny_models import write_tiny_model
from tft_allennlp.common import transformer_source
from tft_allennlp.common.archive_extraction import UntrustedArchiveError

CONFIGURATION = (
    "from transformers import BertConfig\n\n\n"
    "class TinyRemoteConfig(BertConfig):\n"
    "    model_type = 'tiny-remote'\n"
)
MODELING = (
    "from transformers import BertModel\n\n"
    "from .configuration_tiny_remote import TinyRemoteConfig\n\n\n"
    "class TinyRemoteModel(BertModel):\n"
    "    config_class = TinyRemoteConfig\n"
)
AUTO_MAP = {
    "AutoConfig": "configuration_tiny_remote.TinyRemoteConfig",
    "AutoModel": "modeling_tiny_remote.TinyRemoteModel",
}

# Run in a fresh interpreter, so that transformers' module cache and the hub cache are the test's.
SCRIPT = """
import builtins, json, os, sys
import transformers
from tft_allennlp.common.transformer_source import transformer_source
from tft_allennlp.modules.token_embedders.pretrained_transformer_embedder import (
    TftPretrainedTransformerEmbedder,
)

asked = []
builtins.input = lambda *question: asked.append(question) or "y"


def attempt(load):
    try:
        return ["loaded", load()]
    except Exception as error:
        return [type(error).__name__, str(error)]


local, hub = sys.argv[1:]
results = {
    "local": attempt(lambda: transformer_source(local)),
    "transformers itself": attempt(lambda: transformers.AutoConfig.from_pretrained(local)),
    "hub": attempt(lambda: transformer_source(hub)),
}
os.environ["TFT_TRUST_REMOTE_CODE"] = f"someone/else, {hub}, {local}/."
results["named local"] = attempt(lambda: transformer_source(local))
results["embedder"] = attempt(
    lambda: type(TftPretrainedTransformerEmbedder(local).transformer_model).__name__
)
results["named hub"] = attempt(lambda: type(transformers.AutoModel.from_pretrained(hub)).__name__)
results["asked"] = len(asked)
print(json.dumps(results))
"""


def write_remote_code_checkpoint(directory) -> str:
    """A tiny BERT whose config and model classes are the checkpoint's own code."""
    write_tiny_model("bert", str(directory))
    with open(directory / "config.json") as handle:
        config = json.load(handle)
    config.update(model_type="tiny-remote", auto_map=AUTO_MAP)
    (directory / "config.json").write_text(json.dumps(config))
    (directory / "configuration_tiny_remote.py").write_text(CONFIGURATION)
    (directory / "modeling_tiny_remote.py").write_text(MODELING)
    return str(directory)


def test_only_a_named_checkpoints_code_runs_and_nothing_asks_on_the_terminal(tmp_path):
    local = write_remote_code_checkpoint(tmp_path / "tiny-remote")
    # The same files as the hub's cache holds a downloaded repository "tiny/remote".
    hub_cache = tmp_path / "hub"
    snapshot = hub_cache / "models--tiny--remote" / "snapshots" / ("0" * 40)
    shutil.copytree(local, snapshot)
    (hub_cache / "models--tiny--remote" / "refs").mkdir()
    (hub_cache / "models--tiny--remote" / "refs" / "main").write_text("0" * 40)
    environment = dict(
        os.environ,
        HF_HUB_CACHE=str(hub_cache),
        HF_MODULES_CACHE=str(tmp_path / "modules"),
        HF_HUB_OFFLINE="1",
    )
    environment.pop("TFT_TRUST_REMOTE_CODE", None)
    output = subprocess.run(
        [sys.executable, "-c", SCRIPT, local, "tiny/remote"],
        capture_output=True,
        text=True,
        env=environment,
        check=True,
    ).stdout
    results = json.loads(output.splitlines()[-1])

    kind, message = results["local"]
    assert kind == "ConfigurationError"
    assert message == (
        f"{local}: refused: its config.json maps ['AutoConfig', 'AutoModel'] to the checkpoint's "
        "own code (auto_map), which runs only for a model named in TFT_TRUST_REMOTE_CODE "
        f"(TFT_TRUST_REMOTE_CODE={local} if you trust it; docs/security.md)"
    )
    # Past the plugin, transformers refuses too, instead of asking.
    kind, message = results["transformers itself"]
    assert kind == "ValueError" and "trust_remote_code=True" in message
    kind, message = results["hub"]
    assert kind == "ConfigurationError"
    assert message.startswith("tiny/remote: refused: its config.json maps ['AutoConfig'")

    # Named (the folder by another path), the code runs: AllenNLP's tokenizer and model loading
    # pass no trust_remote_code, and the classes are the checkpoint's.
    assert results["named local"] == ["loaded", local]
    assert results["embedder"] == ["loaded", "TinyRemoteModel"]
    assert results["named hub"] == ["loaded", "TinyRemoteModel"]
    assert results["asked"] == 0


def test_an_archive_runs_no_code_even_of_a_named_model(tmp_path, monkeypatch):
    extracted = tmp_path / "extracted"
    extracted.mkdir()
    (extracted / "weights.th").write_bytes(b"")  # what makes it an extracted archive
    copy = transformer_source.copy_directory("tiny/remote", str(extracted))
    os.makedirs(copy)
    with open(os.path.join(copy, "config.json"), "w") as handle:
        json.dump({"model_type": "tiny-remote", "auto_map": AUTO_MAP}, handle)
    monkeypatch.setenv("TFT_TRUST_REMOTE_CODE", "tiny/remote")
    with pytest.raises(UntrustedArchiveError) as error:
        transformer_source.transformer_source("tiny/remote", str(extracted))
    assert str(error.value) == (
        f"{copy}/config.json: refused: maps ['AutoConfig', 'AutoModel'] to code in the archive "
        "(auto_map), and an archive runs no code, even of a model named in TFT_TRUST_REMOTE_CODE"
    )
