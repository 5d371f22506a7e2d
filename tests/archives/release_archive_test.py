"""
An archive made by the release before the stack move (`fixtures/archives/release_0_1_0_mrpc`):
it loads on today's stack, predicts what it predicted then, to 1e-5, and exports.
"""

import json

import pytest
from allennlp.predictors import Predictor
from transformers import AutoModel, AutoTokenizer

from tests import FIXTURES_ROOT
from tft_allennlp.archives.encoder_export import export_encoder

RELEASE = FIXTURES_ROOT / "archives" / "release_0_1_0_mrpc"


@pytest.fixture(scope="module")
def predictor():
    return Predictor.from_path(str(RELEASE / "model.tar.gz"))


def test_the_release_archive_predicts_what_it_predicted(predictor):
    expected = [
        json.loads(line) for line in (RELEASE / "predictions.jsonl").read_text().splitlines()
    ]
    assert len(expected) == 5
    for then in expected:
        now = predictor.predict_json(
            {"sentence1": then["sentence1"], "sentence2": then["sentence2"]}
        )
        assert now["label"] == then["label"]
        assert now["logits"] == pytest.approx(then["logits"], abs=1e-5)
        assert now["probs"] == pytest.approx(then["probs"], abs=1e-5)


def test_the_release_archive_exports_a_checkpoint_transformers_loads(tmp_path):
    output = export_encoder(str(RELEASE / "model.tar.gz"), str(tmp_path / "encoder"))
    model = AutoModel.from_pretrained(output)
    tokenizer = AutoTokenizer.from_pretrained(output)
    encoded = tokenizer("A woman is cutting an onion.", return_tensors="pt")
    # The tiny BERT's width, and a state for every wordpiece.
    assert model(**encoded).last_hidden_state.shape == (1, encoded["input_ids"].shape[1], 32)
