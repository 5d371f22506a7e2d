"""
SMART regularisation (`tft_smart`): the adversarial and proximal terms against values computed
here by hand or by an independent plain-torch computation, where their gradients go, the
moving average and its checkpointing, per-task switching in the multitask model, empty
padding batches, and training, archiving and prediction from the SMART configs.
"""

import json
import math
from typing import Dict, List

import pytest
import torch
import transformers
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.data.data_loaders import DataLoader
from allennlp.models import Model
from allennlp.modules.token_embedders import PretrainedTransformerEmbedder
from allennlp.predictors import Predictor

from tests import CONFIGS_ROOT, FIXTURES_ROOT
from tft_allennlp.data_loaders.streaming_data_loader import empty_batch
from tft_allennlp.models.smart import SmartRegularizedModel
from tft_allennlp.modules.output_regularizers import SmoothnessInducingRegularizer
from tft_allennlp.modules.output_regularizers.embedding_noise import embedding_layers
from tft_allennlp.predictors import SentencePairPredictor

GLUE = FIXTURES_ROOT / "glue"
LABELS = ("label",)


def without_dropout(model: torch.nn.Module) -> torch.nn.Module:
    """Dropout off, also BERT's SDPA attention dropout, so that every pass is deterministic."""
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
        if hasattr(module, "dropout_prob"):
            module.dropout_prob = 0.0
    return model


def build(config: str, dataset: str, **smart):
    """
    The model of `config` wrapped in `tft_smart` with the options `smart` (the config's own
    wrapper if it has one), and a batch of every instance of `dataset`.
    """
    params = Params.from_file(str(CONFIGS_ROOT / config)).as_dict(quiet=True)
    model_params = params["model"]
    if model_params["type"] != "tft_smart":
        model_params = {"type": "tft_smart", "model": model_params}
    model_params.update(smart)
    reader = DatasetReader.from_params(Params(params["dataset_reader"]))
    instances = list(reader.read(str(GLUE / dataset)))
    vocab = Vocabulary.from_params(Params(params["vocabulary"]), instances=instances)
    model = Model.from_params(vocab=vocab, params=Params(model_params))
    batch = Batch(instances)
    batch.index_instances(vocab)
    return model, batch.as_tensor_dict()


def adversarial(model: SmartRegularizedModel) -> SmoothnessInducingRegularizer:
    """The wrapper's adversarial term, whose noise sampler the tests replace."""
    (term,) = [r for r in model.regularizers if isinstance(r, SmoothnessInducingRegularizer)]
    return term


def fixed_noise(monkeypatch, model: SmartRegularizedModel, seed: int = 0) -> List[torch.Tensor]:
    """Replaces the noise sampler by a seeded one; returns the list of the noise it gives."""
    generator = torch.Generator().manual_seed(seed)
    given: List[torch.Tensor] = []

    def sample(embedded):
        noise = 1e-5 * torch.randn(embedded.shape, generator=generator, dtype=embedded.dtype)
        given.append(noise)
        return noise

    monkeypatch.setattr(adversarial(model), "_sample_noise", sample)
    return given


def expected_adversarial(inner, layers, inputs, kinds, noise, step_size=1e-3, epsilon=1e-6):
    """
    SMART's adversarial term with one ascent step, computed here with plain torch: a hook of
    our own adds the deltas, `F.kl_div` gives the KL divergences. Returns the inner model's
    loss plus the term, and the term.
    """
    deltas: List[torch.Tensor] = []
    calls = [0]

    def add(module, args, output):
        delta = deltas[calls[0]]
        calls[0] += 1
        return output + delta

    clean = inner(**inputs)
    handles = [layer.register_forward_hook(add) for layer in layers]
    try:
        unlabelled = {key: value for key, value in inputs.items() if key not in LABELS}
        # The ascent step: the divergence from the fixed clean outputs, summed over examples.
        deltas[:] = [delta.clone().requires_grad_() for delta in noise]
        calls[0] = 0
        noisy = inner(**unlabelled)
        divergence = 0.0
        for key, kind in kinds.items():
            if kind == "classification":
                log_p = torch.log_softmax(noisy[key], -1)
                log_q = torch.log_softmax(clean[key], -1).detach()
                # kl_div(input, target) = KL(target || input).
                divergence = divergence + torch.nn.functional.kl_div(
                    log_p, log_q, log_target=True, reduction="sum"
                )
                divergence = divergence + torch.nn.functional.kl_div(
                    log_q, log_p, log_target=True, reduction="sum"
                )
            else:
                divergence = divergence + ((noisy[key] - clean[key].detach()) ** 2).sum()
        gradients = torch.autograd.grad(divergence, deltas)
        stepped = [
            delta.detach()
            + step_size * gradient / (gradient.abs().max(dim=-1, keepdim=True).values + epsilon)
            for delta, gradient in zip(deltas, gradients)
        ]
        # The adversarial pass, and mt-dnn's symmetric KL: each side against the other detached.
        deltas[:] = stepped
        calls[0] = 0
        adversarial = inner(**unlabelled)
        term = 0.0
        for key, kind in kinds.items():
            if kind == "classification":
                log_p = torch.log_softmax(adversarial[key], -1)
                log_q = torch.log_softmax(clean[key], -1)
                term = term + torch.nn.functional.kl_div(
                    log_p, log_q.detach(), log_target=True, reduction="batchmean"
                )
                term = term + torch.nn.functional.kl_div(
                    log_q, log_p.detach(), log_target=True, reduction="batchmean"
                )
            else:
                term = term + torch.nn.functional.mse_loss(adversarial[key], clean[key].detach())
    finally:
        for handle in handles:
            handle.remove()
    return clean["loss"] + term, term


class LinearOnEmbeddings(Model):
    """
    A model small enough to check by hand: a linear layer on the mean over the wordpieces of a
    tiny BERT's embedding-layer output, which is 0 (its LayerNorm's weight and bias are 0), so
    that the clean output is the layer's bias and a perturbed one its weights times the mean
    delta.
    """

    def __init__(self, vocab: Vocabulary, model_name: str, weight: List[List[float]]) -> None:
        super().__init__(vocab)
        self.embedder = PretrainedTransformerEmbedder(model_name)
        norm = self.embedder.transformer_model.embeddings.LayerNorm
        torch.nn.init.zeros_(norm.weight)
        torch.nn.init.zeros_(norm.bias)
        self.linear = torch.nn.Linear(32, len(weight))
        with torch.no_grad():
            self.linear.weight.zero_()
            self.linear.weight[:, : len(weight[0])] = torch.tensor(weight)
            self.linear.bias.zero_()

    def output_kinds(self):
        """Its prediction, `score` or `logits` by the number of its outputs."""
        return {"score": "regression", "logits": "classification"}

    def forward(self, token_ids, label=None):  # type: ignore
        # Shape: (batch_size, num_wordpieces, 32)
        embedded = self.embedder.transformer_model.embeddings(input_ids=token_ids)
        output = self.linear(embedded.mean(dim=1))
        if output.size(-1) == 1:
            result = {"score": output.squeeze(-1), "embedded": embedded}
            if label is not None:
                result["loss"] = ((result["score"] - label) ** 2).mean()
            return result
        result = {"logits": output, "embedded": embedded}
        if label is not None:
            result["loss"] = torch.nn.functional.cross_entropy(output, label)
        return result


def toy(tiny_bert, weight, **smart) -> SmartRegularizedModel:
    vocab = Vocabulary()
    return SmartRegularizedModel(vocab, LinearOnEmbeddings(vocab, tiny_bert, weight), **smart)


TOY_INPUTS = {"token_ids": torch.tensor([[2, 10, 3], [2, 11, 3]]), "label": torch.tensor([0, 1])}


def test_the_symmetric_kl_term_by_hand(tiny_bert, monkeypatch):
    """Clean logits (0, 0), perturbed (0, log 3): p = (1/4, 3/4), q = (1/2, 1/2), so
    KL(p||q) + KL(q||p) = sum (p - q)(log p - log q) = log(3) / 4."""
    model = toy(tiny_bert, [[0.0], [1.0]], ascent_steps=0, proximal_weight=0.0)
    delta = torch.zeros(2, 3, 32)
    delta[..., 0] = math.log(3.0)
    monkeypatch.setattr(adversarial(model), "_sample_noise", lambda embedded: delta)
    model.train()
    output = model(**TOY_INPUTS)
    assert output["logits"].abs().max() == 0.0
    metrics = model.get_metrics(reset=True)
    assert metrics["smart_adversarial"] == pytest.approx(math.log(3.0) / 4, rel=1e-6)
    assert output["loss"].item() == pytest.approx(math.log(2.0) + math.log(3.0) / 4, rel=1e-6)
    assert "smart_proximal" not in metrics


def test_one_ascent_step_by_hand(tiny_bert, monkeypatch):
    """
    Score w . mean(delta) with w = (1, 2, 0, ...), delta_0 = c everywhere: D = sum (w.delta)^2,
    each token's gradient 2 (w.delta) w / T, whose largest entry is 4 (w.delta) / T, so with
    epsilon 0 the step is eta w / 2 and the term (3c + eta * |w|^2 / 2)^2 = (3c + 2.5 eta)^2.
    """
    c, eta = 0.01, 0.1
    model = toy(tiny_bert, [[1.0, 2.0]], step_size=eta, epsilon=0.0, proximal_weight=0.0)
    monkeypatch.setattr(
        adversarial(model), "_sample_noise", lambda embedded: torch.full((2, 3, 32), c)
    )
    model.train()
    model(**{**TOY_INPUTS, "label": torch.tensor([0.0, 1.0])})
    expected = (3 * c + 2.5 * eta) ** 2
    assert model.get_metrics(reset=True)["smart_adversarial"] == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize(
    "config, dataset, kinds",
    [
        ("smart/mrpc.jsonnet", "MRPC/dev.tsv", {"logits": "classification"}),
        ("smart/stsb.jsonnet", "STS-B/dev.tsv", {"score": "regression"}),
        # Two calls of the transformer per pass, each with its own delta.
        ("siamese/mrpc_softmax.jsonnet", "MRPC/dev.tsv", {"logits": "classification"}),
    ],
    ids=["classification", "regression", "siamese"],
)
def test_the_adversarial_term_and_its_gradient(config, dataset, kinds, monkeypatch):
    """
    In float64, without dropout: the term and every parameter's gradient equal those of the
    plain-torch computation (where the deltas are detached leaves); the ascent leaves `.grad`
    alone, and neither the noise nor any buffer gets a gradient.
    """
    model, inputs = build(config, dataset, proximal_weight=0.0)
    model = without_dropout(model).double().train()
    noise = fixed_noise(monkeypatch, model)
    output = model(**inputs)
    assert len(noise) == (2 if "siamese" in config else 1)
    assert all(parameter.grad is None for parameter in model.parameters())
    output["loss"].backward()
    grads = {name: parameter.grad.clone() for name, parameter in model.named_parameters()}
    assert all(delta.grad is None and not delta.requires_grad for delta in noise)
    assert all(buffer.grad is None for buffer in model.buffers())
    term = model.get_metrics(reset=True)["smart_adversarial"]

    model.zero_grad(set_to_none=True)
    inner = model.inner_model
    layers = [inner._text_field_embedder._token_embedders["tokens"].transformer_model.embeddings]
    expected_loss, expected_term = expected_adversarial(inner, layers, inputs, kinds, noise)
    assert 0 < term == pytest.approx(expected_term.item(), rel=1e-9)
    assert output["loss"].item() == pytest.approx(expected_loss.item(), rel=1e-12)
    expected_loss.backward()
    for name, parameter in model.named_parameters():
        torch.testing.assert_close(grads[name], parameter.grad, rtol=1e-9, atol=1e-15)


def test_the_adversarial_term_is_zero_without_noise():
    """With delta_0 = 0 the divergence is at its minimum: g = 0, delta stays 0."""
    model, inputs = build("smart/mrpc.jsonnet", "MRPC/dev.tsv", noise_std=0.0)
    model = without_dropout(model).train()
    loss = model(**inputs)["loss"]
    metrics = model.get_metrics(reset=True)
    assert metrics["smart_adversarial"] == 0.0 and metrics["smart_proximal"] == 0.0
    assert loss.item() == model.inner_model(**inputs)["loss"].item()


def test_the_proximal_point_moves_once_per_optimizer_step_and_is_checkpointed():
    model, inputs = build("smart/stsb.jsonnet", "STS-B/dev.tsv", proximal_momentum=0.5)
    model = without_dropout(model).train()
    buffers = {name: b for name, b in model.named_buffers() if name.startswith("_proximal")}
    parameters = dict(model.inner_model.named_parameters())
    # One persistent buffer per trainable parameter, its name without dots.
    names = {name: "_proximal__" + name.replace(".", "__") for name in parameters}
    assert set(names.values()) == set(buffers)
    old = {name: parameter.detach().clone() for name, parameter in parameters.items()}
    # Right after construction the moving average is the model: no proximal term.
    model(**inputs)["loss"].backward()
    assert model.get_metrics(reset=True)["smart_proximal"] == 0.0
    torch.optim.SGD(model.parameters(), lr=0.1).step()
    model(**inputs)
    model(**inputs)  # no step in between: the average does not move again
    for name, parameter in parameters.items():
        # theta~ <- (1 - beta) theta + beta theta~, beta = 0.5 (products exact in float32).
        expected = 0.5 * parameter.detach() + 0.5 * old[name]
        assert torch.equal(buffers[names[name]], expected), name
        assert not torch.equal(buffers[names[name]], parameter), name
    assert model.get_metrics(reset=True)["smart_proximal"] > 0

    restored, _ = build("smart/stsb.jsonnet", "STS-B/dev.tsv", proximal_momentum=0.5)
    state = model.state_dict()
    assert all("." not in key for key in state if key.startswith("_proximal"))
    restored.load_state_dict(state)
    for name, buffer in buffers.items():
        assert torch.equal(getattr(restored, name), buffer), name


def _validation_batches(config: str, overrides: Dict) -> tuple:
    params = Params.from_file(str(CONFIGS_ROOT / config), json.dumps(overrides))
    vocab = Vocabulary.from_params(params["vocabulary"].duplicate(), instances=[])
    loader = DataLoader.from_params(
        params["validation_data_loader"].duplicate(),
        reader=DatasetReader.from_params(params["validation_dataset_reader"].duplicate()),
        data_path=params["validation_data_path"].as_dict(quiet=True),
    )
    loader.index_with(vocab)
    model = Model.from_params(params["model"].duplicate(), vocab=vocab)
    return model, {batch["task"][0]: batch for batch in loader}


def test_multitask_smart_regularises_the_named_task_only():
    model, batches = _validation_batches(
        "multitask/sst2_mrpc_stsb_smart.jsonnet", {"model.step_size": 1.0, "model.epsilon": 0.0}
    )
    model = without_dropout(model).train()
    assert sorted(batches) == ["mrpc", "sst2", "stsb"]
    for task in ("mrpc", "stsb"):
        assert model(**batches[task])["loss"].item() == (
            model.inner_model(**batches[task])["loss"].item()
        )
    assert not {"smart_adversarial", "smart_proximal"} & set(model.get_metrics(reset=True))

    loss = model(**batches["sst2"])["loss"].item()
    inner_loss = model.inner_model(**batches["sst2"])["loss"].item()
    metrics = model.get_metrics(reset=True)
    assert metrics["smart_adversarial"] > 1e-4 and metrics["smart_proximal"] == 0.0
    assert loss == pytest.approx(inner_loss + metrics["smart_adversarial"], rel=1e-6)
    assert "sst2_accuracy" in metrics


def test_an_empty_padding_batch_is_left_as_it_is():
    model, inputs = build("smart/stsb.jsonnet", "STS-B/dev.tsv")
    model.train()
    output = model(**empty_batch(inputs))
    assert output["loss"].item() == 0.0 and output["score"].shape == (0,)
    output["loss"].backward()
    assert all(p.grad is not None for p in model.parameters())
    assert not {"smart_adversarial", "smart_proximal"} & set(model.get_metrics(reset=True))


@pytest.mark.parametrize(
    "architecture", ["roberta", "distilbert", "mpnet", "electra", "deberta-v2"]
)
def test_the_embedding_layer_of_each_architecture_feeds_its_encoder(architecture):
    """The `embeddings` module that the noise is added to, on each tiny architecture's
    configuration (tests/tiny_models.py); BERT is the other tests'."""
    size = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
    config = {
        "roberta": lambda: transformers.RobertaConfig(vocab_size=99, **size),
        "distilbert": lambda: transformers.DistilBertConfig(
            vocab_size=99, dim=32, n_layers=2, n_heads=2, hidden_dim=64
        ),
        "mpnet": lambda: transformers.MPNetConfig(vocab_size=99, **size),
        "electra": lambda: transformers.ElectraConfig(vocab_size=99, embedding_size=16, **size),
        "deberta-v2": lambda: transformers.DebertaV2Config(
            vocab_size=99,
            **size,
            relative_attention=True,
            pos_att_type=["p2c", "c2p"],
            position_biased_input=False,
            type_vocab_size=0,
        ),
    }[architecture]()
    transformer = transformers.AutoModel.from_config(config).eval()
    embedder = torch.nn.Module.__new__(PretrainedTransformerEmbedder)
    torch.nn.Module.__init__(embedder)
    embedder.transformer_model = transformer
    (layer,) = embedding_layers(torch.nn.ModuleList([embedder, embedder]))
    assert layer is transformer.embeddings
    ids = torch.tensor([[5, 6, 7, 8]])
    clean = transformer(input_ids=ids).last_hidden_state
    handle = layer.register_forward_hook(lambda module, args, output: output + 1e-2)
    try:
        assert not torch.allclose(transformer(input_ids=ids).last_hidden_state, clean)
    finally:
        handle.remove()


def test_configuration_errors(tiny_bert):
    with pytest.raises(ConfigurationError, match="must be one of"):
        toy(tiny_bert, [[1.0]], outputs={"score": "ranking"})
    with pytest.raises(ConfigurationError, match="has no pretrained_transformer embedder"):
        SmartRegularizedModel(Vocabulary(), Model(Vocabulary()))
    model = toy(tiny_bert, [[0.0], [1.0]], outputs={"embedded": "classification"}).train()
    with pytest.raises(ConfigurationError, match=r"'embedded' of shape \(2, 3, 32\)"):
        model(**TOY_INPUTS)


class TestSmartConfigs(ModelTestCase):
    def test_classification_can_train_save_load_and_predict(self):
        self.set_up_model(CONFIGS_ROOT / "smart/mrpc.jsonnet", GLUE / "MRPC/train.tsv")
        self.ensure_model_can_train_save_and_load(self.param_file, seed=1)
        archive = self.TEST_DIR / "save_and_load_test/model.tar.gz"
        predictor = Predictor.from_path(archive)
        assert isinstance(predictor, SentencePairPredictor)
        assert isinstance(predictor._model, SmartRegularizedModel)
        output = predictor.predict_json({"sentence1": "the cat sat", "sentence2": "a cat sat"})
        assert output["label"] in {"0", "1"} and sum(output["probs"]) == pytest.approx(1.0)
        metrics = json.loads((self.TEST_DIR / "save_and_load_test/metrics.json").read_text())
        assert metrics["training_smart_adversarial"] > 0 and metrics["training_smart_proximal"] > 0
        assert "validation_smart_adversarial" not in metrics

    def test_regression_can_train_save_and_load(self):
        self.set_up_model(CONFIGS_ROOT / "smart/stsb.jsonnet", GLUE / "STS-B/train.tsv")
        self.ensure_model_can_train_save_and_load(self.param_file, seed=1)
