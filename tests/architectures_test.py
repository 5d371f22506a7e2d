"""
Every GLUE and injection config runs unchanged on checkpoints of each supported architecture
(tiny random-init ones written by `tests/tiny_models.py`): the pair layout each tokenizer
defines, segment ids only where the model embeds them, word spans mapped to their own
wordpieces, and an export that `AutoModel` loads whole, with the same outputs.
"""

import json
import os
import random

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common import cached_transformers
from allennlp.data.tokenizers import PretrainedTransformerTokenizer
from transformers import AutoModel, AutoTokenizer

from tests import CONFIGS_ROOT
from tests.tiny_bert import WORDS
from tests.tiny_models import ARCHITECTURES, write_tiny_model
from tft_allennlp.archives.encoder_export import export_encoder
from tft_allennlp.common.pair_layout import PairEncoder

# Architectures whose models embed segment ids (the others get 0 everywhere).
SEGMENT_IDS = {"bert", "electra"}
SPLIT = {
    "dataset_reader.validation_fraction": 0.25,
    "validation_dataset_reader.validation_fraction": 0.25,
}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("architectures")
    return {
        architecture: write_tiny_model(architecture, str(root / architecture))
        for architecture in ARCHITECTURES
    }


@pytest.fixture
def model_name(models, request, monkeypatch):
    name = models[request.param]
    monkeypatch.setenv("TFT_MODEL", name)
    # Each architecture's tiny model is loaded afresh (AllenNLP caches transformers by name).
    cached_transformers._clear_caches()
    return name


def encoder(model_name, max_length=40):
    tokenizer = PretrainedTransformerTokenizer(model_name, add_special_tokens=False)
    return PairEncoder(tokenizer, max_length, "test")


@pytest.mark.parametrize("model_name", ARCHITECTURES, indirect=True)
def test_word_spans_map_to_their_own_wordpieces(model_name, request):
    architecture = request.node.callspec.params["model_name"]
    pairs = encoder(model_name)
    hf = AutoTokenizer.from_pretrained(model_name)
    special = set(hf.all_special_ids)
    rng = random.Random(0)

    def text(tokens):
        return "".join(hf.convert_tokens_to_string([t.text for t in tokens]).split()).lower()

    for _ in range(60):
        source = rng.choices(WORDS, k=rng.randint(1, 12))
        target = rng.choices(WORDS, k=rng.randint(1, 12))
        layout = pairs.layout(source, target)
        ids = [t.text_id for t in layout.tokens]
        # The tokenizer's own pair layout: [CLS] s [SEP] t [SEP], <s> s </s></s> t </s>, ...
        boundaries = [i for i, id_ in enumerate(ids) if id_ in special]
        assert (
            layout.tokens
            == pairs.join(pairs.word_pieces(source).pieces, pairs.word_pieces(target).pieces).tokens
        )
        source_region = range(boundaries[0] + 1, boundaries[1])
        target_region = range(boundaries[-2] + 1, boundaries[-1])
        types = [t.type_id for t in layout.tokens]
        if architecture in SEGMENT_IDS:
            assert types[target_region[0]] == 1 and types[source_region[0]] == 0
        else:
            assert set(types) == {0}
        for _ in range(5):
            j = rng.randrange(len(source))
            k = rng.randrange(j, len(source))
            m = rng.randrange(len(target))
            o = rng.randrange(m, len(target))
            source_pieces, target_pieces = layout.source_span((j, k)), layout.target_span((m, o))
            if source_pieces is not None:
                assert source_pieces[0] in source_region and source_pieces[1] in source_region
                assert (
                    text(layout.tokens[source_pieces[0] : source_pieces[1] + 1])
                    == "".join(source[j : k + 1]).lower()
                )
            if target_pieces is not None:
                assert target_pieces[0] in target_region and target_pieces[1] in target_region
                assert (
                    text(layout.tokens[target_pieces[0] : target_pieces[1] + 1])
                    == "".join(target[m : o + 1]).lower()
                )
            # A span is dropped exactly when truncation cut the pieces of its last word.
            kept = pairs.join(
                pairs.word_pieces(source).pieces, pairs.word_pieces(target).pieces
            ).lengths
            assert (source_pieces is None) == (
                pairs.word_pieces(source).word_spans[k][1] >= kept[0]
            )
            assert (target_pieces is None) == (
                pairs.word_pieces(target).word_spans[o][1] >= kept[1]
            )


@pytest.mark.parametrize("model_name", ARCHITECTURES, indirect=True)
def test_inject_export_and_fine_tune_unchanged_configs(model_name, tmp_path):
    injection = train_model_from_file(
        CONFIGS_ROOT / "injection/tft.jsonnet",
        tmp_path / "injection",
        overrides=json.dumps({"trainer.num_epochs": 1, **SPLIT}),
    )
    exported = export_encoder(str(tmp_path / "injection/model.tar.gz"), str(tmp_path / "encoder"))
    reloaded, loading = AutoModel.from_pretrained(exported, output_loading_info=True)
    # Nothing is initialised at random on loading: the export is the whole model.
    assert not loading["missing_keys"]
    embedder = injection._text_field_embedder._token_embedders["tokens"]
    tokenizer = AutoTokenizer.from_pretrained(exported)
    inputs = tokenizer(
        ["a man plays the flute", "two dogs"],
        ["a man is playing", "dogs run"],
        padding=True,
        return_tensors="pt",
    )
    embedder.eval(), reloaded.eval()
    with torch.no_grad():
        expected = embedder.transformer_model(**inputs).last_hidden_state
        actual = reloaded(**inputs).last_hidden_state
    assert torch.allclose(actual, expected, atol=1e-6)
    # Both GLUE families fine-tune the export with the configs as they are.
    os.environ["TFT_MODEL"] = exported
    cached_transformers._clear_caches()
    for task in ("mrpc", "stsb"):
        train_model_from_file(
            CONFIGS_ROOT / f"glue/{task}.jsonnet",
            tmp_path / task,
            overrides=json.dumps({"trainer.num_epochs": 1}),
        )
        metrics = json.loads((tmp_path / task / "metrics.json").read_text())
        assert metrics["training_loss"] > 0 and "validation_combined_score" in metrics
