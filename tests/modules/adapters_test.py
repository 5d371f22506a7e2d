"""
Bottleneck adapters (`tft_bottleneck`) on every supported architecture: near-identity at
initialisation, the closed-form parameter counts of each sharing variant, only adapters, layer
norms and the classifier trained, a clear error for an architecture without known sublayers, and
the export format read back by `tft_exported`.
"""

import copy
import json
import math
import shutil

import pytest
import torch
import transformers
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params, cached_transformers
from allennlp.common.checks import ConfigurationError
from allennlp.common.testing import ModelTestCase
from allennlp.modules.token_embedders import TokenEmbedder
from allennlp.predictors import Predictor

from tests import CONFIGS_ROOT, FIXTURES_ROOT
from tests.tiny_models import ARCHITECTURES, write_tiny_model
from tft_allennlp.archives.encoder_export import export_encoder
from tft_allennlp.modules.adapters import SITES, BottleneckAdapters, TransformerAdapters
from tft_allennlp.training.callbacks.parameter_counts import parameter_counts

HIDDEN, LAYERS, BOTTLENECK = 32, 2, 8  # the tiny models' size; a small bottleneck
PER_ADAPTER = 2 * BOTTLENECK * HIDDEN + HIDDEN + BOTTLENECK  # 2md + d + m = 552
LAYER_NORMS = LAYERS * 2 * 2 * HIDDEN  # two layer norms per layer, weight and bias


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("adapter_models")
    return {name: write_tiny_model(name, str(root / name)) for name in ARCHITECTURES}


def embedder(model_name, adapters=True, **options):
    params = {"type": "tft_pretrained_transformer", "model_name": model_name}
    if adapters:
        params["adapters"] = {"type": "tft_bottleneck", "bottleneck": BOTTLENECK, **options}
    return TokenEmbedder.from_params(Params(params)).eval()


def encode(module, seed=0):
    generator = torch.Generator().manual_seed(seed)
    vocab_size = module.transformer_model.config.vocab_size
    token_ids = torch.randint(5, vocab_size, (3, 9), generator=generator)
    mask = torch.ones(3, 9, dtype=torch.bool)
    mask[1, 6:] = False
    with torch.no_grad():
        return module(token_ids, mask)


def test_every_architecture_the_plugin_supports_has_sites():
    assert set(ARCHITECTURES) == set(SITES)


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_zero_initialised_adapters_are_exactly_the_identity(models, architecture):
    plain = encode(embedder(models[architecture], adapters=False))
    adapted = embedder(models[architecture], init_std=0.0)
    assert torch.equal(encode(adapted), plain)
    # The hooks really run: changing an adapter's bias changes the output (a bias that varies
    # along the hidden dimension: a constant one would vanish in the next layer norm).
    with torch.no_grad():
        adapted.adapters.adapters[0].up.bias.copy_(torch.linspace(-1, 1, HIDDEN))
    assert not torch.allclose(encode(adapted), plain)


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_default_initialisation_is_near_the_identity(models, architecture):
    """
    Each adapter adds `up(gelu(down(h)))` to its input h, whose norm is at most
    `1.13 * |up|_F * |down|_F * |h|` (GELU's slope is below 1.13): a relative change `r` per
    adapter. 2L adapter applications, each perturbing its sublayer's output relatively by at
    most r, and a post-layer-norm residual stream that at most doubles a relative perturbation
    (the norm rescales by the standard deviation, which moves by at most as much), give a
    tolerance of 2 * 2L * r on the final hidden states, relative to their norm. r is about 0.02
    here (std 0.01, d = 32, m = 8); the measured change is far smaller, while an untrained
    adapter of std 1 would exceed it by orders of magnitude.
    """
    plain = encode(embedder(models[architecture], adapters=False))
    adapted = embedder(models[architecture])
    r = max(
        1.13 * adapter.up.weight.norm().item() * adapter.down.weight.norm().item()
        for adapter in adapted.adapters.adapters
    )
    assert 0.005 < r < 0.05
    # Over the unpadded wordpieces (some models zero the padded ones).
    real = plain.norm(dim=-1) > 0
    change = (encode(adapted) - plain).norm(dim=-1)[real] / plain.norm(dim=-1)[real]
    assert 0 < change.max().item() <= 2 * 2 * LAYERS * r


@pytest.mark.parametrize(
    "variant, adapters, layer_norms",
    [
        ({}, 2 * LAYERS, False),
        ({"share_sublayers": True}, LAYERS, False),  # Mohebbi & Rajaee's "Houlsby"
        ({"train_layer_norms": True}, 2 * LAYERS, True),  # "not shared"
        ({"share_every": 3, "share_sublayers": True}, math.ceil(LAYERS / 3), False),  # 3-shared
        ({"share_every": 2}, 2, False),
    ],
)
@pytest.mark.parametrize("architecture", ["bert", "distilbert", "mpnet"])
def test_trainable_parameters_equal_the_closed_forms(
    models, architecture, variant, adapters, layer_norms
):
    module = embedder(models[architecture], **variant)
    assert len(module.adapters.adapters) == adapters
    counts = parameter_counts(module)
    expected = adapters * PER_ADAPTER + (LAYER_NORMS if layer_norms else 0)
    assert counts["trainable"] == expected
    plain = parameter_counts(embedder(models[architecture], adapters=False))["total"]
    assert counts["total"] == plain + adapters * PER_ADAPTER
    # Shared adapters are stored once: the state dict holds each adapter's weights once.
    adapter_keys = [key for key in module.state_dict() if key.startswith("adapters.")]
    assert len(adapter_keys) == 4 * adapters


def test_the_bert_base_counts_of_mohebbi_and_rajaee():
    """Their Table 1 (BERT-base, m = 64) for the Houlsby and 3-shared variants."""
    config = transformers.BertConfig()  # bert-base-uncased's shape, random weights
    counts = {}
    for name, variant in {
        "houlsby": {"share_sublayers": True},
        "not_shared": {"train_layer_norms": True},
        "3-shared": {"share_every": 3, "share_sublayers": True},
    }.items():
        with torch.device("meta"):  # shapes only: no memory, no initialisation
            model = transformers.BertModel(config, add_pooling_layer=False)
            adapters = BottleneckAdapters(**variant)
            adapters.attach(model)
        counts[name] = parameter_counts(torch.nn.ModuleList([model, adapters]))["trainable"]
    # not shared: 24 adapters and 24 layer norms; their 3,006,720 adds BERT's pooler (590,592).
    assert counts == {"houlsby": 1189632, "not_shared": 2416128, "3-shared": 396544}
    assert counts["not_shared"] + 768 * 768 + 768 == 3006720


def test_an_architecture_without_known_sublayers_is_refused():
    gpt2 = transformers.GPT2Model(transformers.GPT2Config(n_layer=1, n_embd=8, n_head=2))
    with pytest.raises(ConfigurationError, match="'gpt2'.*supported: \\['bert'"):
        BottleneckAdapters().attach(gpt2)
    with pytest.raises(ConfigurationError, match="unknown activation 'nope'"):
        BottleneckAdapters(activation="nope")


def test_adapters_leave_other_loads_of_the_checkpoint_alone(models):
    cached_transformers._clear_caches()
    plain = encode(embedder(models["bert"], adapters=False))
    adapted = embedder(models["bert"])
    assert not torch.equal(encode(adapted), plain)
    # AllenNLP caches the checkpoint; the adapters' hooks are on the embedder's own copy.
    assert torch.equal(encode(embedder(models["bert"], adapters=False)), plain)
    # A deep copy runs its own adapters.
    copied = copy.deepcopy(adapted)
    with torch.no_grad():
        copied.adapters.adapters[0].up.bias.copy_(torch.linspace(-1, 1, HIDDEN))
    assert not torch.allclose(encode(copied), encode(adapted))
    adapted.adapters.detach()
    assert torch.equal(encode(adapted), plain)


class TestAdapterTraining(ModelTestCase):
    def test_three_shared_adapters_train_save_and_load(self):
        self.set_up_model(
            CONFIGS_ROOT / "adapters/mrpc_three_shared.jsonnet",
            FIXTURES_ROOT / "glue/MRPC/train.tsv",
        )
        # The frozen encoder gets no gradient; its unused pooler is dropped.
        frozen = {
            name for name, parameter in self.model.named_parameters() if not parameter.requires_grad
        }
        self.ensure_model_can_train_save_and_load(
            self.param_file, gradients_to_ignore=frozen, seed=1
        )

    def test_a_training_step_changes_only_adapters_layer_norms_and_the_classifier(self):
        self.set_up_model(
            CONFIGS_ROOT / "adapters/mrpc_not_shared.jsonnet", FIXTURES_ROOT / "glue/MRPC/train.tsv"
        )
        before = {key: value.clone() for key, value in self.model.state_dict().items()}
        trainable = [parameter for parameter in self.model.parameters() if parameter.requires_grad]
        optimizer = torch.optim.SGD(trainable, lr=0.1)
        loss = self.model.forward(**self.dataset.as_tensor_dict())["loss"]
        loss.backward()
        optimizer.step()
        changed = {
            key
            for key, value in self.model.state_dict().items()
            if not torch.equal(value, before[key])
        }
        names = {
            name for name, parameter in self.model.named_parameters() if parameter.requires_grad
        }
        assert changed == names
        embedder = "_text_field_embedder.token_embedder_tokens."
        adapters = {name for name in names if name.startswith(embedder + "adapters.")}
        layer_norms = {name for name in names if "LayerNorm" in name}
        classifier = {name for name in names if name.startswith("_task_output.")}
        assert len(adapters) == 4 * 2 * LAYERS and len(layer_norms) == 2 * 2 * LAYERS
        assert classifier == {
            "_task_output._output_layer.weight",
            "_task_output._output_layer.bias",
        }
        assert names == adapters | layer_norms | classifier
        counts = parameter_counts(self.model)
        # The config's bottleneck, 64: 2md + d + m = 4,192 per adapter.
        per_adapter = 2 * 64 * HIDDEN + HIDDEN + 64
        assert counts["trainable"] == 2 * LAYERS * per_adapter + LAYER_NORMS + 2 * HIDDEN + 2


def test_export_writes_the_adapters_beside_the_unchanged_encoder(tmp_path, monkeypatch):
    overrides = json.dumps(
        {
            "trainer.num_epochs": 1,
            "model.text_field_embedder.token_embedders.tokens.adapters.bottleneck": BOTTLENECK,
        }
    )
    model = train_model_from_file(
        str(CONFIGS_ROOT / "adapters/mrpc_houlsby.jsonnet"),
        str(tmp_path / "run"),
        overrides=overrides,
    )
    trained = model._text_field_embedder._token_embedders["tokens"]
    # The trainer logged and wrote the split: adapters and the classifier are trained.
    counts = json.loads((tmp_path / "run/parameter_counts.json").read_text())
    assert counts == parameter_counts(model)
    assert counts["trainable"] == LAYERS * PER_ADAPTER + 2 * HIDDEN + 2
    export = tmp_path / "export"
    export_encoder(str(tmp_path / "run" / "model.tar.gz"), str(export))
    assert json.loads((export / "adapters.json").read_text()) == {
        "type": "tft_bottleneck",
        "bottleneck": BOTTLENECK,
        "activation": "gelu",
        "share_every": 1,
        "share_sublayers": True,
        "train_layer_norms": False,
        "init_std": 0.01,
    }
    # The encoder alone is the frozen checkpoint, untouched by training.
    base = transformers.AutoModel.from_pretrained(trained.transformer_model.config._name_or_path)
    exported = transformers.AutoModel.from_pretrained(str(export))
    for name, value in base.state_dict().items():
        assert torch.equal(exported.state_dict()[name], value), name
    # With its adapters it computes what the trained model did.
    params = {
        "type": "tft_pretrained_transformer",
        "model_name": str(export),
        "adapters": {"type": "tft_exported", "directory": str(export)},
    }
    restored = TokenEmbedder.from_params(Params(params)).eval()
    assert isinstance(restored.adapters, TransformerAdapters)
    assert torch.allclose(encode(restored), encode(trained.eval()), atol=1e-6)
    with pytest.raises(ConfigurationError, match="adapters.json: no such file"):
        TransformerAdapters.from_params(
            Params({"type": "tft_exported", "directory": str(tmp_path)})
        )

    # Fine-tuned with the exported adapters, the archive needs the export no more.
    monkeypatch.setenv("TFT_MODEL", str(export))
    adapters = {"type": "tft_exported", "directory": str(export)}
    train_model_from_file(
        str(CONFIGS_ROOT / "glue/mrpc.jsonnet"),
        str(tmp_path / "glue"),
        overrides=json.dumps(
            {
                "trainer.num_epochs": 1,
                "model.text_field_embedder.token_embedders.tokens.adapters": adapters,
            }
        ),
    )
    pair = {"sentence1": "The cat sat.", "sentence2": "A cat was sitting."}
    before = Predictor.from_path(str(tmp_path / "glue/model.tar.gz")).predict_json(pair)
    shutil.rmtree(export)
    after = Predictor.from_path(str(tmp_path / "glue/model.tar.gz")).predict_json(pair)
    assert after == before
    with pytest.raises(ConfigurationError, match="export: no such directory"):
        TransformerAdapters.from_params(Params(adapters))
