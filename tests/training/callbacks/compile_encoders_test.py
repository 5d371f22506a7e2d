import os

import torch
from allennlp.common import Params
from allennlp.modules.token_embedders import TokenEmbedder

from tests import CONFIGS_ROOT
from tests.allennlp_cli import allennlp_train, write_config
from tft_allennlp.training.callbacks.compile_encoders import compile_problem


def test_a_compiled_embedder_traces_whole_and_computes_the_same_states_and_gradients():
    embedder = TokenEmbedder.from_params(
        Params({"type": "tft_pretrained_transformer", "model_name": os.environ["TFT_MODEL"]})
    ).eval()
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(
        5, embedder.transformer_model.config.vocab_size, (3, 9), generator=generator
    )
    mask = torch.ones(3, 9, dtype=torch.bool)
    mask[1, 6:] = False
    types = torch.zeros(3, 9, dtype=torch.long)
    types[:, 5:] = 1
    for first_token_only in (False, True):
        eager = embedder(ids, mask, type_ids=types, first_token_only=first_token_only)
        eager.sum().backward()
        eager_gradients = [p.grad.clone() for p in embedder.parameters() if p.grad is not None]
        embedder.zero_grad()
        explained = torch._dynamo.explain(embedder)(
            ids, mask, type_ids=types, first_token_only=first_token_only
        )
        assert (explained.graph_count, explained.graph_break_count) == (1, 0)
        compiled = torch.compile(embedder, backend="aot_eager")
        states = compiled(ids, mask, type_ids=types, first_token_only=first_token_only)
        states.sum().backward()
        gradients = [p.grad.clone() for p in embedder.parameters() if p.grad is not None]
        embedder.zero_grad()
        torch.testing.assert_close(states, eager, rtol=0, atol=1e-5)
        assert len(gradients) == len(eager_gradients) > 0
        for gradient, eager_gradient in zip(gradients, eager_gradients):
            torch.testing.assert_close(gradient, eager_gradient, rtol=0, atol=1e-5)
        torch._dynamo.reset()


def train_with(tmp_path, config: str, overrides: dict, callback: dict):
    """`allennlp train` of the shipped `config` with `callback` added; the run's log."""
    path = write_config(
        tmp_path / "config.json",
        CONFIGS_ROOT / config,
        overrides,
        edit=lambda params: params["trainer"]["callbacks"].append(callback),
    )
    result = allennlp_train(path, tmp_path / "run", "--file-friendly-logging")
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "run" / "model.tar.gz").is_file()
    return (tmp_path / "run" / "out.log").read_text()


def test_a_glue_run_compiles_its_encoder_and_reports_the_graphs_of_each_epoch(tmp_path):
    log = train_with(
        tmp_path,
        "glue/mrpc.jsonnet",
        {"trainer.num_epochs": 1},
        {"type": "tft_compile_encoders", "backend": "aot_eager"},
    )
    assert "Compiling 1 encoder(s) with backend=aot_eager" in log
    # Training's batches, then validation's (no gradients: graphs of their own), none broken.
    assert "Epoch 0 compiled " in log and "graph(s) and met 0 graph break(s)." in log


def test_without_a_compiler_it_says_why_once_and_trains_eagerly(tmp_path, monkeypatch):
    monkeypatch.setenv("CXX", "no-such-c++")
    assert compile_problem("inductor", torch.device("cpu")) == (
        "no C++ compiler (no-such-c++; set CXX), which inductor builds CPU kernels with"
    )
    assert compile_problem("aot_eager", torch.device("cpu")) is None
    log = train_with(
        tmp_path, "glue/mrpc.jsonnet", {"trainer.num_epochs": 1}, {"type": "tft_compile_encoders"}
    )
    assert log.count("Not compiling the encoders: no C++ compiler (no-such-c++") == 1
    assert "Compiling" not in log and "graph break" not in log


def test_an_injection_run_compiles_its_whole_computation_without_a_break(tmp_path):
    log = train_with(
        tmp_path,
        "injection/tft.jsonnet",
        # The fixture corpus is small: a quarter of it for validation.
        {
            "trainer.num_epochs": 1,
            "dataset_reader.validation_fraction": 0.25,
            "validation_dataset_reader.validation_fraction": 0.25,
        },
        {"type": "tft_compile_encoders", "backend": "aot_eager"},
    )
    assert "Compiling ParaphraseInjector.compute with backend=aot_eager" in log
    assert "graph(s) and met 0 graph break(s)." in log
