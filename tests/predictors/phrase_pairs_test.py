import json
import os
import subprocess
import sys

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.predictors import Predictor
from transformers import AutoModel, AutoTokenizer

from tests import CONFIGS_ROOT, PROJECT_ROOT
from tft_allennlp.commands.export import export_encoder

SPLIT = {
    "dataset_reader.validation_fraction": 0.25,
    "validation_dataset_reader.validation_fraction": 0.25,
}


@pytest.fixture(scope="module")
def injected(tmp_path_factory, tiny_bert):
    """An injection model trained for two epochs on the fixture corpus, and its archive."""
    directory = tmp_path_factory.mktemp("injection")
    model = train_model_from_file(
        CONFIGS_ROOT / "injection/tft.jsonnet",
        directory,
        overrides=json.dumps({**SPLIT, "trainer.num_epochs": 2}),
    )
    return model, str(directory / "model.tar.gz")


def test_phrase_pair_view(injected):
    _, archive = injected
    predictor = Predictor.from_path(archive)
    assert type(predictor).__name__ == "PhrasePairsPredictor"
    output = predictor.predict_json(
        {
            "sentence1": "A man is playing a flute.",
            "sentence2": "A man plays the flute.",
            "phrase_pairs": [[[3, 5], [2, 4]], [[0, 1], [3, 4]]],
        }
    )
    assert 0.0 <= output["paraphrase_probability"] <= 1.0
    pairs = output["phrase_pairs"]
    assert [(p["source"], p["target"]) for p in pairs] == [
        ("playing a flute", "plays the flute"),
        ("A man", "the flute"),
    ]
    assert all(0.0 <= p["paraphrase_probability"] <= 1.0 for p in pairs)
    assert all(p["label"] in {"paraphrase", "random", "in_paraphrase"} for p in pairs)


def test_inventories_are_scored_pairwise_and_batches_agree(injected):
    _, archive = injected
    predictor = Predictor.from_path(archive)
    request = {
        "source": ["A", "man", "sleeps"],
        "target": ["A", "man", "is", "asleep"],
        "source_phrases": [[0, 1], [2, 2]],
        "target_phrases": [[0, 1], [2, 3]],
    }
    single = predictor.predict_json(request)
    assert [p["source_span"] + p["target_span"] for p in single["phrase_pairs"]] == [
        [0, 1, 0, 1], [0, 1, 2, 3], [2, 2, 0, 1], [2, 2, 2, 3]
    ]
    batch = predictor.predict_batch_json([request, {**request, "target_phrases": [[3, 3]]}])
    assert len(batch[1]["phrase_pairs"]) == 2
    assert batch[0]["paraphrase_probability"] == pytest.approx(single["paraphrase_probability"], abs=1e-5)


def test_without_phrases_the_aligner_supplies_them(injected):
    _, archive = injected
    predictor = Predictor.from_path(archive)
    output = predictor.predict_json(
        {"sentence1": "A man is playing a flute.", "sentence2": "A man plays the flute."}
    )
    # The aligner's phrases: 6 in each sentence (see tests/alignment), all 36 combinations.
    pairs = [(p["source"], p["target"]) for p in output["phrase_pairs"]]
    assert len(pairs) == 36
    assert ("is playing a flute", "plays the flute") in pairs and ("man", "flute") in pairs


def test_bad_requests(injected):
    _, archive = injected
    predictor = Predictor.from_path(archive)
    with pytest.raises(ValueError, match="phrase_pairs"):
        predictor.predict_json({"sentence1": "A b.", "sentence2": "C d.", "source_phrases": []})
    with pytest.raises(ValueError, match="outside 2 words"):
        predictor.predict_json({"source": ["a", "b"], "target": ["c"], "phrase_pairs": [[[0, 2], [0, 0]]]})


def test_export_round_trip_and_glue_from_the_export(injected, tmp_path):
    model, archive = injected
    exported = str(tmp_path / "encoder")
    # Through the command line, as a user runs it (plugin found via .allennlp_plugins).
    subprocess.run(
        [sys.executable, "-m", "allennlp", "tft-export", archive, exported],
        cwd=PROJECT_ROOT, check=True, env=dict(os.environ), capture_output=True,
    )
    assert {"config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json"} <= set(
        os.listdir(exported)
    )
    reloaded = AutoModel.from_pretrained(exported, add_pooling_layer=False)
    trained = model._text_field_embedder._token_embedders["tokens"].transformer_model
    trained_state, reloaded_state = trained.state_dict(), reloaded.state_dict()
    assert trained_state.keys() == reloaded_state.keys()
    for name, tensor in trained_state.items():
        assert torch.equal(tensor, reloaded_state[name]), name
    # Injection changed the encoder: it differs from the random-init checkpoint it started from.
    original = AutoModel.from_pretrained(os.environ["TFT_MODEL"], add_pooling_layer=False)
    assert not torch.equal(
        original.state_dict()["encoder.layer.0.attention.self.query.weight"],
        reloaded_state["encoder.layer.0.attention.self.query.weight"],
    )
    assert AutoTokenizer.from_pretrained(exported).tokenize("playing") == ["play", "##ing"]
    # A GLUE config fine-tunes from the export.
    os.environ["TFT_MODEL"], base = exported, os.environ["TFT_MODEL"]
    try:
        train_model_from_file(
            CONFIGS_ROOT / "glue/mrpc.jsonnet",
            tmp_path / "mrpc",
            overrides=json.dumps({"trainer.num_epochs": 1}),
        )
    finally:
        os.environ["TFT_MODEL"] = base
    assert json.loads((tmp_path / "mrpc/metrics.json").read_text())["validation_accuracy"] >= 0.0


def test_export_python_api_rejects_archives_without_a_transformer(tmp_path):
    with pytest.raises(Exception):
        export_encoder(str(tmp_path / "missing.tar.gz"), str(tmp_path / "out"))


def test_text_is_split_into_words_as_the_aligner_splits_it(injected):
    """Spans read off `tft-align` output point at the same words when the predictor gets text."""
    _, archive = injected
    predictor = Predictor.from_path(archive)
    from tft_allennlp.alignment.pipeline import Aligner

    text = "I don't like   the U.S. plan's cost."
    words = Aligner("en_core_web_sm").parse_text([text])[0].words
    assert words == ["I", "do", "n't", "like", "the", "U.S.", "plan", "'s", "cost", "."]
    output = predictor.predict_json({"sentence1": text, "sentence2": "A plan costs too much .",
                                     "phrase_pairs": [[[1, 2], [2, 2]], [[5, 7], [1, 1]]]})
    assert [pair["source"] for pair in output["phrase_pairs"]] == ["do n't", "U.S. plan 's"]
