import json

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch, Vocabulary
from allennlp.models import Model
from sklearn.metrics import accuracy_score, f1_score

from tests import CONFIGS_ROOT, FIXTURES_ROOT
from tests.readers import glue_reader
from tft_allennlp.common.glue_tasks import GLUE_TASKS
from tft_allennlp.data_loaders.streaming_data_loader import empty_batch

GLUE = FIXTURES_ROOT / "glue"
SIAMESE_CONFIGS = sorted((CONFIGS_ROOT / "siamese").glob("*.jsonnet"))
# A tiny batch, so that an epoch on the fixtures takes several steps.
TINY_BATCH = json.dumps({"data_loader.batch_size": 4})


class TestSiamesePairClassifier(ModelTestCase):
    def test_softmax_can_train_save_and_load(self):
        self.set_up_model(CONFIGS_ROOT / "siamese/mrpc_softmax.jsonnet", GLUE / "MRPC/train.tsv")
        self.ensure_model_can_train_save_and_load(self.param_file, overrides=TINY_BATCH, seed=1)

    def test_multiple_negatives_ranking_can_train_save_and_load(self):
        self.set_up_model(CONFIGS_ROOT / "siamese/mrpc_mnr.jsonnet", GLUE / "MRPC/train.tsv")
        self.ensure_model_can_train_save_and_load(self.param_file, overrides=TINY_BATCH, seed=1)

    def test_cosine_regression_can_train_save_and_load(self):
        self.set_up_model(CONFIGS_ROOT / "siamese/stsb_cosine.jsonnet", GLUE / "STS-B/train.tsv")
        self.ensure_model_can_train_save_and_load(self.param_file, overrides=TINY_BATCH, seed=1)

    def test_embeddings_are_the_masked_means_of_each_sentence_alone(self):
        self.set_up_model(CONFIGS_ROOT / "siamese/mrpc_softmax.jsonnet", GLUE / "MRPC/train.tsv")
        self.model.eval()
        batch = Batch(self.instances)
        batch.index_instances(self.vocab)
        tensors = batch.as_tensor_dict()
        output = self.model(**tensors)
        embedder = self.model._text_field_embedder
        for field, key in (("tokens1", "embedding1"), ("tokens2", "embedding2")):
            for row, instance in enumerate(self.instances):
                # The sentence alone, unpadded: its wordpieces' mean.
                single = Batch([instance])
                single.index_instances(self.vocab)
                with torch.no_grad():
                    vectors = embedder(single.as_tensor_dict()[field])[0]
                assert torch.allclose(output[key][row], vectors.mean(0), atol=1e-5)

    def test_cosine_objective_metrics_come_from_the_threshold(self):
        self.set_up_model(CONFIGS_ROOT / "siamese/mrpc_mnr.jsonnet", GLUE / "MRPC/train.tsv")
        self.model.eval()
        outputs = self.model.forward_on_instances(self.instances)
        positive = self.vocab.get_token_index("1", "labels")
        predicted = [positive if out["cosine"] >= 0.5 else 1 - positive for out in outputs]
        gold = [self.vocab.get_token_index(i["label"].label, "labels") for i in self.instances]
        metrics = self.model.get_metrics(reset=True)
        assert metrics["accuracy"] == pytest.approx(accuracy_score(gold, predicted))
        assert metrics["f1"] == pytest.approx(
            f1_score(gold, predicted, pos_label=positive, zero_division=0)
        )
        assert [out["label"] for out in outputs] == [
            self.vocab.get_token_from_index(index, "labels") for index in predicted
        ]


def build_model(config, **overrides) -> Model:
    params = Params.from_file(str(config), json.dumps(overrides))
    vocab = Vocabulary.from_params(params.pop("vocabulary"), instances=[])
    return Model.from_params(vocab=vocab, params=params.pop("model"))


def test_siamese_configs():
    assert [path.stem for path in SIAMESE_CONFIGS] == [
        "mrpc_cosine_embedding",
        "mrpc_mnr",
        "mrpc_softmax",
        "stsb_cosine",
    ]


@pytest.mark.parametrize("config", SIAMESE_CONFIGS, ids=lambda path: path.stem)
def test_siamese_config_builds_with_the_glue_recipe(config):
    params = Params.from_file(str(config))
    glue = Params.from_file(str(CONFIGS_ROOT / "glue" / f"{params['model']['task']}.jsonnet"))
    assert params["dataset_reader"]["pair_encoding"] == "separate"
    assert params["validation_dataset_reader"]["pair_encoding"] == "separate"
    # The GLUE base's recipe knobs, unchanged.
    assert params["trainer"].as_dict() == glue["trainer"].as_dict()
    assert params["data_loader"]["batch_size"] == glue["data_loader"]["batch_size"]
    assert params["dataset_reader"]["max_length"] == glue["dataset_reader"]["max_length"]
    model = build_model(config)
    assert type(model).__name__ == "SiamesePairClassifier"


def test_one_config_trains_one_epoch_on_the_fixtures(tmp_path):
    config = CONFIGS_ROOT / "siamese/mrpc_cosine_embedding.jsonnet"
    overrides = {"trainer.num_epochs": 1, "data_loader.batch_size": 4}
    model = train_model_from_file(str(config), str(tmp_path), overrides=json.dumps(overrides))
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    for name in GLUE_TASKS["mrpc"].metrics:
        assert f"validation_{name}" in metrics
    assert (tmp_path / "model.tar.gz").exists()
    assert model.get_metrics().keys() >= {"accuracy", "f1", "combined_score"}


def test_single_sentence_tasks_are_rejected():
    with pytest.raises(ConfigurationError, match="sentence-pair task"):
        build_model(CONFIGS_ROOT / "siamese/mrpc_softmax.jsonnet", **{"model.task": "cola"})


def test_seq2vec_encoder_must_fit_the_embedder():
    with pytest.raises(ConfigurationError):
        build_model(
            CONFIGS_ROOT / "siamese/mrpc_softmax.jsonnet",
            **{"model.seq2vec_encoder": {"type": "boe", "embedding_dim": 7}},
        )


@pytest.mark.parametrize("config", ["mrpc_softmax", "mrpc_mnr"])
def test_an_empty_padding_batch_trains_nothing(config):
    """The empty batches `tft_streaming` gives a distributed worker whose data ran out."""
    model = build_model(CONFIGS_ROOT / f"siamese/{config}.jsonnet")
    reader = glue_reader("mrpc", pair_encoding="separate")
    instances = list(reader.read(str(GLUE / "MRPC/dev.tsv")))
    batch = Batch(instances)
    batch.index_instances(model.vocab)
    empty = empty_batch(batch.as_tensor_dict())
    model.train()
    output = model(**empty)
    assert output["loss"].item() == 0.0 and output["embedding1"].shape == (0, 32)
    output["loss"].backward()
    # Every parameter gets a (zero) gradient, so that DDP's backward completes.
    for name, parameter in model.named_parameters():
        assert parameter.grad is not None and not parameter.grad.any(), name
    model.eval()
    assert "loss" not in model(**empty)
