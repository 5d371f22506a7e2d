"""
`tft_host_patches.huggingface_stack`: AllenNLP 2.10.1 imports and runs on transformers 5 and
huggingface-hub 2, each mend doing what the removed API did, and a fresh interpreter applies
them before AllenNLP is imported, without importing a Hugging Face library at start-up.
"""

import json
import subprocess
import sys

import pytest
import torch
from allennlp.common import Params
from allennlp.data.tokenizers import PretrainedTransformerTokenizer
from allennlp.training.optimizers import Optimizer

import tft_host_patches
from tests.tiny_models import write_tiny_model


def test_a_fresh_interpreter_imports_allennlp_with_nothing_of_hugging_face_at_start_up():
    script = (
        "import json, sys\n"
        "early = sorted(n for n in ('transformers', 'huggingface_hub') if n in sys.modules)\n"
        "import allennlp.commands, allennlp.common.cached_transformers\n"
        "import allennlp.training.optimizers\n"
        "import tft_host_patches\n"
        "print(json.dumps({'early': early, 'replaced': tft_host_patches.replaced()}))\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    report = json.loads(output.splitlines()[-1])
    assert report["early"] == []
    assert ["huggingface_hub.HfFolder", "huggingface_stack"] in report["replaced"]
    assert ["huggingface_hub.Repository", "huggingface_stack"] in report["replaced"]
    assert ["transformers.AdamW", "huggingface_stack"] in report["replaced"]
    assert [
        "allennlp.common.cached_transformers.get_tokenizer",
        "huggingface_stack",
    ] in report["replaced"]


def test_the_removed_repository_refuses_in_one_line():
    import huggingface_hub

    with pytest.raises(RuntimeError) as error:
        huggingface_hub.Repository("somewhere", clone_from="user/model")
    assert "\n" not in str(error.value)
    assert "tft-export" in str(error.value)


def test_huggingface_adamw_is_torchs_adamw_with_bias_correction():
    weights = torch.nn.Parameter(torch.tensor([1.0, -2.0, 3.0]))
    reference = torch.nn.Parameter(weights.detach().clone())
    optimizer = Optimizer.from_params(
        model_parameters=[("w", weights)],
        params=Params({"type": "huggingface_adamw", "lr": 0.1, "weight_decay": 0.01}),
    )
    torch_adamw = torch.optim.AdamW([reference], lr=0.1, weight_decay=0.01)
    for _ in range(3):
        for parameter, optim in ((weights, optimizer), (reference, torch_adamw)):
            optim.zero_grad()
            (parameter * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
            optim.step()
    assert torch.equal(weights.detach(), reference.detach())
    # A constant gradient under bias correction moves each weight by lr a step, after the
    # decoupled decay w * (1 - lr * decay): 1 -> 0.899 -> 0.798101 -> 0.697302899 (without the
    # correction the first step alone would be lr * 0.1 / sqrt(0.001) = 0.316).
    assert weights.detach()[0].item() == pytest.approx(0.697302899, abs=1e-6)
    with pytest.raises(ValueError, match="correct_bias"):
        Optimizer.from_params(
            model_parameters=[("w", torch.nn.Parameter(torch.zeros(1)))],
            params=Params({"type": "huggingface_adamw", "correct_bias": False}),
        )


def test_allennlps_tokenizer_encodes_pairs_as_transformers_does(tmp_path):
    model = write_tiny_model("bert", str(tmp_path / "bert"))
    tokenizer = PretrainedTransformerTokenizer(model, add_special_tokens=False)
    # "playing" is two wordpieces of the tiny vocabulary; [CLS] and [SEP] come from the
    # reverse-engineered special tokens.
    tokens = tokenizer.add_special_tokens(
        tokenizer.tokenize("the boy playing"), tokenizer.tokenize("a flute")
    )
    assert [t.text for t in tokens] == [
        "[CLS]",
        "the",
        "boy",
        "play",
        "##ing",
        "[SEP]",
        "a",
        "f",
        "##lu",
        "##te",
        "[SEP]",
    ]
    assert [t.type_id for t in tokens] == [0] * 6 + [1] * 5
    assert tokenizer.tokenizer.encode_plus("the boy", "a flute") == tokenizer.tokenizer(
        "the boy", "a flute"
    )


def test_replace_is_once_per_patch_and_keeps_the_original():
    class Host:
        def method(self):
            return "original"

    def first(self):
        return "first"

    assert tft_host_patches.replace(Host, "method", first, patch="test_patch")
    assert not tft_host_patches.replace(Host, "method", lambda self: "again", patch="test_patch")
    assert Host().method() == "first"
    assert tft_host_patches.original(Host, "method")(Host()) == "original"
