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
from tests.predictors import unread
from tft_allennlp.archives.encoder_export import export_encoder
from tft_allennlp.common.input_problems import MalformedInputError

SPLIT = {
    "dataset_reader.validation_fraction": 0.25,
    "validation_dataset_reader.validation_fraction": 0.25,
}


@pytest.fixture(scope="module")
def injected(tmp_path_factory, tiny_bert):
    """An injection model trained for two epochs on the fixture corpus, and its archive (with
    both epochs' checkpoints: the configs keep only the latest by default)."""
    directory = tmp_path_factory.mktemp("injection")
    keep_all = {"trainer.checkpointer.keep_most_recent_by_count": None}
    model = train_model_from_file(
        CONFIGS_ROOT / "injection/tft.jsonnet",
        directory,
        overrides=json.dumps({**SPLIT, **keep_all, "trainer.num_epochs": 2}),
    )
    return model, str(directory / "model.tar.gz")


def test_a_pair_cut_off_by_truncation_keeps_its_place_marked(injected, caplog):
    """It used to be left out: two pairs asked for, one returned."""
    _, archive = injected
    predictor = Predictor.from_path(archive)
    source = ["the", "cat", "sat", "on", "the", "mat"] * 30  # 180 words, max_length is 128
    request = {
        "source": source,
        "target": ["A", "cat", "sat", "."],
        "phrase_pairs": [[[170, 172], [1, 2]], [[0, 1], [0, 1]]],
    }
    pairs = predictor.predict_json(request)["phrase_pairs"]
    assert [(p["source_span"], p["target_span"]) for p in pairs] == [
        ([170, 172], [1, 2]),
        ([0, 1], [0, 1]),
    ]
    assert pairs[0]["paraphrase_probability"] is None and pairs[0]["label"] is None
    assert pairs[0]["left_out"].startswith("not in the encoded text (truncated to max_length")
    assert 0.0 < pairs[1]["paraphrase_probability"] < 1.0 and "left_out" not in pairs[1]
    assert "1 of 2 phrase pairs left out" in caplog.text


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


@pytest.fixture(scope="module")
def predictor(injected):
    return Predictor.from_path(injected[1])


FLUTE = {"sentence1": "A man is playing a flute.", "sentence2": "A man plays the flute."}
WORDS = {"source": ["A", "man", "sleeps"], "target": ["A", "man", "is", "asleep"]}
PAIR = [[[0, 1], [0, 1]]]


@pytest.mark.parametrize(
    "line, reason",
    [
        ('{"sentence1": "A man"', "invalid JSON: Expecting ',' delimiter at column 22"),
        ("[1, 2]", "expected a JSON object, not [1, 2]"),
        ({**FLUTE, "sentence1": ""}, "'sentence1' must be non-empty text, not \"\""),
        ({**FLUTE, "sentence2": " \t"}, "'sentence2' must be non-empty text, not \" \\t\""),
        ({**FLUTE, "sentence2": None}, "'sentence2' must be non-empty text, not null"),
        ({**FLUTE, "sentence1": 3}, "'sentence1' must be non-empty text, not 3"),
        ({**WORDS, "source": []}, "'source' must be a non-empty list of words, not []"),
        (
            {**WORDS, "target": "A man is asleep"},
            "'target' must be a non-empty list of words, not \"A man is asleep\"",
        ),
        ({**WORDS, "source": ["A", 5]}, "'source' word 1 must be non-empty text, not 5"),
        ({**WORDS, "source": ["A", None]}, "'source' word 1 must be non-empty text, not null"),
        ({**WORDS, "source": [["A"]]}, "'source' word 0 must be non-empty text, not [\"A\"]"),
        ({**WORDS, "target": ["A", " "]}, "'target' word 1 must be non-empty text, not \" \""),
        (
            {"sentence1": "A man."},
            "expected 'target' (a list of words) or 'sentence2' (text)",
        ),
        (
            {**WORDS, "phrase_pairs": [[["0", 1], [0, 0]]]},
            'malformed span: phrase_pairs[0] source span ["0", 1] is not [start, end], '
            "two integers",
        ),
        (
            {**WORDS, "phrase_pairs": [[[0, 0], [0, 1.5]]]},
            "malformed span: phrase_pairs[0] target span [0, 1.5] is not [start, end], "
            "two integers",
        ),
        ({**WORDS, "phrase_pairs": None}, "'phrase_pairs' must be a list, not null"),
        (
            {**WORDS, "phrase_pairs": [[0, 1], [2, 3]]},
            "malformed phrase pair: phrase_pairs[0] [0, 1] is not [source span, target span] "
            "(one pair: phrase_pairs [[[0, 1], [2, 3]]])",
        ),
        (
            {**FLUTE, "phrase_pairs": [[[5, 3], [0, 0]]]},
            "reversed span: phrase_pairs[0] source span [5, 3] has start > end",
        ),
        (
            {**FLUTE, "phrase_pairs": [[[0, 0], [0, 6]]]},
            "span out of range: phrase_pairs[0] target span [0, 6] for 6 words",
        ),
        (
            {**WORDS, "source_phrases": [[0, 0]], "target_phrases": [[-1, 0]]},
            "span out of range: target_phrases[0] [-1, 0] for 4 words",
        ),
        (
            {**WORDS, "source_phrases": [[0, 0]]},
            "give 'phrase_pairs', or 'source_phrases' and 'target_phrases', as word spans",
        ),
    ],
)
def test_each_problem_is_named_with_its_line(predictor, line, reason):
    text = line if isinstance(line, str) else json.dumps(line)
    with pytest.raises(MalformedInputError) as error:
        unread(predictor).load_line(text)
    assert str(error.value) == f"input line 1: {reason}"
    if not isinstance(line, str):  # the same check for a request from Python
        with pytest.raises(MalformedInputError) as error:
            predictor.predict_json(line)
        assert str(error.value) == f"input: {reason}"


def test_lines_are_counted_and_checked_before_prediction(predictor):
    predictor = unread(predictor)
    good = json.dumps({**WORDS, "phrase_pairs": PAIR})
    assert predictor.load_line(good) == {**WORDS, "phrase_pairs": PAIR}
    with pytest.raises(MalformedInputError, match="^input line 2: reversed span"):
        predictor.load_line(json.dumps({**WORDS, "phrase_pairs": [[[1, 0], [0, 0]]]}))
    # Spans given for text are checked against the words the aligner splits it into.
    predictor.load_line(json.dumps({**FLUTE, "phrase_pairs": [[[6, 6], [5, 5]]]}))
    with pytest.raises(MalformedInputError, match="^input line 4: span out of range"):
        predictor.load_line(json.dumps({**FLUTE, "phrase_pairs": [[[7, 7], [5, 5]]]}))


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
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} <= set(
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
    from tft_allennlp.alignment.pipeline import AlignmentPipeline

    text = "I don't like   the U.S. plan's cost."
    words = AlignmentPipeline("en_core_web_sm").parse_text([text])[0].words
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
    """docs/injection.md: a directory exports its best.th; --weights-file picks another."""
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
