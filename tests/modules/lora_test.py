"""
LoRA adapters (`lora`, through peft) on every supported architecture: the adapted model starts as
the checkpoint, only the LoRA weights train and the transformer's own stay equal to the bit, the
parameter count is the closed form, and `tft-export` writes either the encoder with peft's adapter
folder beside it (which peft loads) or one merged plain checkpoint (or Hugging Face sequence
classifier), each computing what the trained model does.
"""

import json

import pytest
import torch
import transformers
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.modules.token_embedders import TokenEmbedder
from allennlp.predictors import Predictor
from peft import PeftModel
from sentence_transformers import SentenceTransformer

from tests import CONFIGS_ROOT
from tests.tiny_models import ARCHITECTURES, write_tiny_model
from tft_allennlp.archives.encoder_export import export_encoder
from tft_allennlp.archives.sequence_classification import export_sequence_classifier
from tft_allennlp.modules.adapters import LoraAdapters, TransformerAdapters
from tft_allennlp.modules.adapters.lora import TARGET_MODULES
from tft_allennlp.training.callbacks.parameter_counts import parameter_counts

HIDDEN, LAYERS, RANK = 32, 2, 4  # the tiny models' size; a small rank
# r (d_in + d_out) per adapted layer: the query and value projections (32 -> 32) of each layer,
# or ModernBERT's fused query-key-value projection (32 -> 96), once a layer.
LORA_PARAMETERS = {
    architecture: LAYERS * RANK * (2 * (HIDDEN + HIDDEN) if architecture != "modernbert" else 128)
    for architecture in ARCHITECTURES
}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("lora_models")
    return {name: write_tiny_model(name, str(root / name)) for name in ARCHITECTURES}


def embedder(model_name, lora=True, **options):
    params = {"type": "tft_pretrained_transformer", "model_name": model_name}
    if lora:
        params["adapters"] = {"type": "lora", "r": RANK, "alpha": 8, **options}
    return TokenEmbedder.from_params(Params(params))


def token_ids(module, seed=0):
    generator = torch.Generator().manual_seed(seed)
    vocab_size = module.transformer_model.config.vocab_size
    ids = torch.randint(5, vocab_size, (3, 9), generator=generator)
    mask = torch.ones(3, 9, dtype=torch.bool)
    mask[1, 6:] = False
    return ids, mask


def test_every_architecture_the_plugin_supports_has_default_targets():
    assert set(ARCHITECTURES) == set(TARGET_MODULES)


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_lora_starts_as_the_checkpoint_and_trains_only_its_own_weights(models, architecture):
    torch.manual_seed(0)
    plain = embedder(models[architecture], lora=False).eval()
    adapted = embedder(models[architecture])
    ids, mask = token_ids(adapted)
    with torch.no_grad():
        # B starts at zero: the adapted model computes what the checkpoint does.
        assert torch.allclose(adapted.eval()(ids, mask), plain(ids, mask), atol=1e-6)
    trainable = {
        name: parameter for name, parameter in adapted.named_parameters() if parameter.requires_grad
    }
    assert trainable and all(".lora_A." in name or ".lora_B." in name for name in trainable)
    assert parameter_counts(adapted)["trainable"] == LORA_PARAMETERS[architecture]
    frozen = {
        name: parameter.detach().clone()
        for name, parameter in adapted.named_parameters()
        if not parameter.requires_grad
    }
    before = {name: parameter.detach().clone() for name, parameter in trainable.items()}
    optimizer = torch.optim.SGD(trainable.values(), lr=0.5)
    # A loss that depends on every output direction: a fixed random projection of the states.
    projection = torch.randn(3, 9, HIDDEN, generator=torch.Generator().manual_seed(1))
    adapted.train()
    for _ in range(2):  # the first step moves only B: A's gradient goes through B, still zero
        optimizer.zero_grad()
        (adapted(ids, mask) * projection).sum().backward()
        optimizer.step()
    for name, value in frozen.items():
        assert torch.equal(dict(adapted.named_parameters())[name], value), name
    assert all(not torch.equal(trainable[name], before[name]) for name in trainable)
    with torch.no_grad():
        assert not torch.allclose(adapted.eval()(ids, mask), plain(ids, mask), atol=1e-4)


def test_configuration_errors_name_the_problem(models):
    with pytest.raises(ConfigurationError, match="r \\(0\\) and alpha"):
        LoraAdapters(r=0)
    with pytest.raises(ConfigurationError, match="target_modules is empty"):
        LoraAdapters(target_modules=[])
    with pytest.raises(ConfigurationError, match="lora: Target modules {'nope'} not found"):
        embedder(models["bert"], target_modules=["nope"])
    gpt2 = transformers.GPT2Model(transformers.GPT2Config(n_layer=1, n_embd=8, n_head=2))
    with pytest.raises(ConfigurationError, match="no default target_modules for .*'gpt2'"):
        LoraAdapters().attach(gpt2)


def test_export_as_peft_folder_or_merged_computes_what_the_trained_model_does(tmp_path):
    adapters = {"type": "lora", "r": RANK, "alpha": 8}
    model = train_model_from_file(
        str(CONFIGS_ROOT / "glue/mrpc.jsonnet"),
        str(tmp_path / "run"),
        overrides=json.dumps(
            {
                # Several steps: the schedule's warmup makes the first one's rate zero.
                "trainer.num_epochs": 2,
                "data_loader.batch_size": 4,
                "trainer.optimizer.lr": 0.01,
                "model.text_field_embedder.token_embedders.tokens.adapters": adapters,
            }
        ),
    )
    trained = model._text_field_embedder._token_embedders["tokens"].eval()
    # Trained: the LoRA weights and the classifier, nothing of the encoder.
    counts = json.loads((tmp_path / "run/parameter_counts.json").read_text())
    assert counts["trainable"] == LORA_PARAMETERS["bert"] + 2 * HIDDEN + 2
    ids, mask = token_ids(trained)
    with torch.no_grad():
        expected = trained(ids, mask)
    base_name = trained.transformer_model.config._name_or_path
    base = transformers.AutoModel.from_pretrained(base_name).eval()

    # Beside: the encoder as it started, and peft's adapter folder, which peft loads.
    archive = str(tmp_path / "run/model.tar.gz")
    beside = tmp_path / "beside"
    export_encoder(archive, str(beside))
    assert json.loads((beside / "adapters.json").read_text()) == {
        **adapters,
        "dropout": 0.0,
        "target_modules": None,
    }
    # The card says that the encoder alone is not the trained model.
    card = (beside / "README.md").read_text()
    assert "## Adapters\n\nTrained with `lora` adapters on a frozen encoder. This" in card
    assert "Without them it is not the trained model" in card
    peft_config = json.loads((beside / "peft_adapter/adapter_config.json").read_text())
    assert (peft_config["peft_type"], peft_config["r"], peft_config["lora_alpha"]) == ("LORA", 4, 8)
    exported = transformers.AutoModel.from_pretrained(str(beside)).eval()
    for name, value in base.state_dict().items():
        assert torch.equal(exported.state_dict()[name], value), name
    with torch.no_grad():
        peft_model = PeftModel.from_pretrained(exported, str(beside / "peft_adapter")).eval()
        assert torch.allclose(
            peft_model(input_ids=ids, attention_mask=mask).last_hidden_state, expected, atol=1e-5
        )
    restored = TokenEmbedder.from_params(
        Params(
            {
                "type": "tft_pretrained_transformer",
                "model_name": str(beside),
                "adapters": {"type": "tft_exported", "directory": str(beside)},
            }
        )
    ).eval()
    assert isinstance(restored.adapters, LoraAdapters)
    with torch.no_grad():
        assert torch.allclose(restored(ids, mask), expected, atol=1e-5)

    # Merged: one plain checkpoint, no adapter files; a sentence-transformers model too.
    merged_dir = tmp_path / "merged"
    export_encoder(archive, str(merged_dir), sentence_transformers=True, merge_adapters=True)
    assert not (merged_dir / "adapters.json").exists()
    assert not (merged_dir / "peft_adapter").exists()
    assert (
        "merged into these weights: this checkpoint is the trained encoder"
        in (merged_dir / "README.md").read_text()
    )
    merged = transformers.AutoModel.from_pretrained(str(merged_dir)).eval()
    with torch.no_grad():
        states = merged(input_ids=ids, attention_mask=mask).last_hidden_state
        sentence_model = SentenceTransformer(str(merged_dir), device="cpu")[0].auto_model.eval()
        sentence_states = sentence_model(input_ids=ids, attention_mask=mask).last_hidden_state
    assert torch.allclose(states, expected, atol=1e-5)
    assert torch.allclose(sentence_states, expected, atol=1e-5)
    assert not torch.allclose(
        base(input_ids=ids, attention_mask=mask).last_hidden_state, expected, atol=1e-4
    )
    # The archive's model is left as it was trained.
    with torch.no_grad():
        assert torch.equal(trained(ids, mask), expected)

    # The GLUE classifier as a Hugging Face sequence classifier: LoRA merged, the trained
    # model's logits; refused unmerged, which such a classifier would not run.
    with pytest.raises(ConfigurationError, match="LoRA's: merge them, --merge-adapters"):
        export_sequence_classifier(archive, str(tmp_path / "unmerged"))
    classifier_dir = str(tmp_path / "classifier")
    export_sequence_classifier(archive, classifier_dir, merge_adapters=True)
    classifier = transformers.AutoModelForSequenceClassification.from_pretrained(classifier_dir)
    tokenizer = transformers.AutoTokenizer.from_pretrained(classifier_dir)
    pairs = [("The cat sat on the mat.", "A cat sat there."), ("It rained.", "Prices rose.")]
    inputs = tokenizer(*zip(*pairs), padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        logits = classifier.eval()(**inputs).logits
    outputs = Predictor.from_path(archive).predict_batch_json(
        [{"sentence1": first, "sentence2": second} for first, second in pairs]
    )
    assert torch.allclose(logits, torch.tensor([o["logits"] for o in outputs]), atol=1e-5)
    assert "merged into these weights" in (tmp_path / "classifier/README.md").read_text()


def test_bottleneck_adapters_cannot_be_merged(models):
    module = embedder(models["bert"], lora=False)
    adapters = TransformerAdapters.from_params(Params({"type": "tft_bottleneck", "bottleneck": 4}))
    with pytest.raises(ConfigurationError, match="tft_bottleneck adapters cannot be merged"):
        adapters.unloaded(module.transformer_model, merge=True)
