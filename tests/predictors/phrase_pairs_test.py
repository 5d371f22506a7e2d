import json
import os
import subprocess
import sys

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params, cached_transformers
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.models import Model
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
    request = {
        "sentence1": "A man is playing a flute.",
        "sentence2": "A man plays the flute.",
        "phrase_pairs": [[[3, 5], [2, 4]], [[0, 1], [3, 4]]],
    }
    output = predictor.predict_json(request)
    pairs = output["phrase_pairs"]
    assert [(p["source"], p["target"]) for p in pairs] == [
        ("playing a flute", "plays the flute"),
        ("A man", "the flute"),
    ]
    # The view carries the model's own probabilities for the same input.
    instance = predictor._json_to_instance(request)
    predictor._dataset_reader.apply_token_indexers(instance)
    expected = predictor._model.forward_on_instance(instance)
    paraphrase = predictor._model.vocab.get_token_index("paraphrase", "labels")
    assert output["paraphrase_probability"] == pytest.approx(
        float(expected["sentence_probs"][paraphrase])
    )
    assert [p["paraphrase_probability"] for p in pairs] == pytest.approx(
        expected["phrase_paraphrase_probs"]
    )
    assert [p["label"] for p in pairs] == expected["phrase_labels"]


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
        [0, 1, 0, 1],
        [0, 1, 2, 3],
        [2, 2, 0, 1],
        [2, 2, 2, 3],
    ]
    batch = predictor.predict_batch_json([request, {**request, "target_phrases": [[3, 3]]}])
    assert len(batch[1]["phrase_pairs"]) == 2
    assert batch[0]["paraphrase_probability"] == pytest.approx(
        single["paraphrase_probability"], abs=1e-5
    )


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
        predictor.predict_json(
            {"source": ["a", "b"], "target": ["c"], "phrase_pairs": [[[0, 2], [0, 0]]]}
        )


def test_export_round_trip_and_glue_from_the_export(injected, tmp_path):
    model, archive = injected
    exported = str(tmp_path / "encoder")
    # Through the command line, as a user runs it (plugin found via .allennlp_plugins).
    subprocess.run(
        [sys.executable, "-m", "allennlp", "tft-export", archive, exported],
        cwd=PROJECT_ROOT,
        check=True,
        env=dict(os.environ),
        capture_output=True,
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
    # A GLUE config built with TFT_MODEL set to the export starts from the injected weights.
    os.environ["TFT_MODEL"], base = exported, os.environ["TFT_MODEL"]
    try:
        cached_transformers._clear_caches()
        params = Params.from_file(str(CONFIGS_ROOT / "glue/mrpc.jsonnet"))
        vocab = Vocabulary.from_params(params.pop("vocabulary"), instances=[])
        glue = Model.from_params(vocab=vocab, params=params.pop("model"))
    finally:
        os.environ["TFT_MODEL"] = base
        cached_transformers._clear_caches()
    glue_state = glue._text_field_embedder._token_embedders["tokens"].transformer_model.state_dict()
    for name, tensor in glue_state.items():
        assert torch.equal(tensor, trained_state[name]), name


def test_export_names_a_missing_or_broken_archive(tmp_path, injected):
    _, archive = injected
    with pytest.raises(ConfigurationError, match="missing.tar.gz: no such file"):
        export_encoder(str(tmp_path / "missing.tar.gz"), str(tmp_path / "out"))
    (tmp_path / "text.tar.gz").write_text("not an archive\n")
    with pytest.raises(ConfigurationError, match="text.tar.gz: not a readable model archive"):
        export_encoder(str(tmp_path / "text.tar.gz"), str(tmp_path / "out"))
    data = open(archive, "rb").read()
    (tmp_path / "truncated.tar.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(ConfigurationError, match="truncated.tar.gz: not a readable model archive"):
        export_encoder(str(tmp_path / "truncated.tar.gz"), str(tmp_path / "out"))
    with pytest.raises(ConfigurationError, match="best.th: no such file"):
        export_encoder(archive, str(tmp_path / "out"), weights_file=str(tmp_path / "best.th"))


def test_text_is_split_into_words_as_the_aligner_splits_it(injected):
    """Spans read off `tft-align` output point at the same words when the predictor gets text."""
    _, archive = injected
    predictor = Predictor.from_path(archive)
    from tft_allennlp.alignment.pipeline import Aligner

    text = "I don't like   the U.S. plan's cost."
    words = Aligner("en_core_web_sm").parse_text([text])[0].words
    assert words == ["I", "do", "n't", "like", "the", "U.S.", "plan", "'s", "cost", "."]
    output = predictor.predict_json(
        {
            "sentence1": text,
            "sentence2": "A plan costs too much .",
            "phrase_pairs": [[[1, 2], [2, 2]], [[5, 7], [1, 1]]],
        }
    )
    assert [pair["source"] for pair in output["phrase_pairs"]] == ["do n't", "U.S. plan 's"]


def test_export_from_a_serialization_directory_and_from_a_weights_file(injected, tmp_path):
    """The README's promises: a directory exports its best.th; --weights-file picks another."""
    _, archive = injected
    directory = os.path.dirname(archive)

    def encoder_state(path):
        return AutoModel.from_pretrained(path).state_dict()

    def checkpoint(epoch):  # AllenNLP names the checkpoint after epoch k "model_state_e{k+1}_b0"
        return os.path.join(directory, f"model_state_e{epoch + 1}_b0.th")

    best_epoch = json.loads(open(os.path.join(directory, "metrics.json")).read())["best_epoch"]
    from_archive = encoder_state(export_encoder(archive, str(tmp_path / "archive")))
    from_directory = encoder_state(export_encoder(directory, str(tmp_path / "directory")))
    best = encoder_state(
        export_encoder(directory, str(tmp_path / "best"), weights_file=checkpoint(best_epoch))
    )
    other = encoder_state(
        export_encoder(directory, str(tmp_path / "other"), weights_file=checkpoint(1 - best_epoch))
    )
    for key in from_archive:
        assert torch.equal(from_archive[key], from_directory[key]) and torch.equal(
            from_archive[key], best[key]
        ), key
    name = "encoder.layer.0.attention.self.query.weight"
    assert not torch.equal(other[name], from_archive[name])
