import json

import numpy
import pytest
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch, Instance
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

from tests import CONFIGS_ROOT, FIXTURES_ROOT
from tft_allennlp.data_loaders.streaming_data_loader import empty_batch

GLUE = FIXTURES_ROOT / "glue"


def gold_indices(model, instances):
    return [model.vocab.get_token_index(i["label"].label, "labels") for i in instances]


class TestGlueClassifier(ModelTestCase):
    def test_classification_can_train_save_and_load(self):
        self.set_up_model(CONFIGS_ROOT / "glue/mrpc.jsonnet", GLUE / "MRPC/train.tsv")
        self.ensure_model_can_train_save_and_load(self.param_file, seed=1)

    def test_regression_can_train_save_and_load(self):
        self.set_up_model(CONFIGS_ROOT / "glue/stsb.jsonnet", GLUE / "STS-B/train.tsv")
        self.ensure_model_can_train_save_and_load(self.param_file, seed=1)

    def test_single_sentence_can_train_save_and_load(self):
        self.set_up_model(CONFIGS_ROOT / "glue/cola.jsonnet", GLUE / "CoLA/train.tsv")
        self.ensure_model_can_train_save_and_load(self.param_file, seed=1)

    def test_accuracy_and_f1_of_the_positive_class(self):
        self.set_up_model(CONFIGS_ROOT / "glue/mrpc.jsonnet", GLUE / "MRPC/train.tsv")
        self.model.eval()
        outputs = self.model.forward_on_instances(self.instances)
        predicted = [int(numpy.argmax(output["probs"])) for output in outputs]
        gold = gold_indices(self.model, self.instances)
        positive = self.model.vocab.get_token_index("1", "labels")
        metrics = self.model.get_metrics(reset=True)
        assert set(metrics) == {"accuracy", "f1", "combined_score"}
        assert metrics["accuracy"] == pytest.approx(accuracy_score(gold, predicted))
        assert metrics["f1"] == pytest.approx(
            f1_score(gold, predicted, pos_label=positive, zero_division=0)
        )
        assert metrics["combined_score"] == pytest.approx((metrics["accuracy"] + metrics["f1"]) / 2)
        assert [output["label"] for output in outputs] == [
            self.model.vocab.get_token_from_index(index, "labels") for index in predicted
        ]
        for output in outputs:
            assert sum(output["probs"]) == pytest.approx(1.0, abs=1e-5)

    def test_matthews_correlation_for_cola(self):
        self.set_up_model(CONFIGS_ROOT / "glue/cola.jsonnet", GLUE / "CoLA/train.tsv")
        self.model.eval()
        # Output weights along the difference of the two classes' mean [CLS] vectors, so that
        # the random model predicts both classes, correlated with the gold ones, and the check
        # cannot compare 0 with 0.
        batch = Batch(self.instances)
        batch.index_instances(self.vocab)
        gold = torch.tensor(gold_indices(self.model, self.instances))
        with torch.no_grad():
            vectors = self.model._text_field_embedder(batch.as_tensor_dict()["tokens"])[:, 0, :]
            centre = vectors.mean(0)
            direction = vectors[gold == 1].mean(0) - vectors[gold == 0].mean(0)
            self.model._task_output._output_layer.weight.copy_(torch.stack([-direction, direction]))
            self.model._task_output._output_layer.bias.copy_(
                torch.stack([centre @ direction, -(centre @ direction)])
            )
        outputs = self.model.forward_on_instances(self.instances)
        predicted = [int(numpy.argmax(output["probs"])) for output in outputs]
        assert len(set(predicted)) == 2
        metrics = self.model.get_metrics(reset=True)
        assert set(metrics) == {"mcc"}
        expected = matthews_corrcoef(gold_indices(self.model, self.instances), predicted)
        assert expected != 0.0 and metrics["mcc"] == pytest.approx(expected)

    def test_pearson_and_spearman_for_stsb(self):
        self.set_up_model(CONFIGS_ROOT / "glue/stsb.jsonnet", GLUE / "STS-B/train.tsv")
        self.model.eval()
        outputs = self.model.forward_on_instances(self.instances)
        scores = [float(output["score"]) for output in outputs]
        gold = [i["label"].tensor.item() for i in self.instances]
        metrics = self.model.get_metrics(reset=True)
        assert set(metrics) == {"pearson", "spearman", "combined_score"}
        assert metrics["pearson"] == pytest.approx(pearsonr(gold, scores)[0], abs=1e-5)
        assert metrics["spearman"] == pytest.approx(spearmanr(gold, scores)[0], abs=1e-5)
        assert all(type(value) is float for value in metrics.values())
        assert "label" not in outputs[0] and "probs" not in outputs[0]

    def test_metrics_over_unlabelled_data_are_an_error_naming_the_file(self):
        """`allennlp evaluate` on a GLUE test split read 0.0 for every metric, and exited 0."""
        test_file = GLUE / "MRPC/test.tsv"
        self.set_up_model(CONFIGS_ROOT / "glue/mrpc.jsonnet", test_file)
        self.model.eval()
        outputs = self.model.forward_on_instances(self.instances)  # predicting is fine
        assert len(outputs) == 3 and "loss" not in outputs[0]
        message = f"{test_file}:2: no labels (3 examples without): metrics need labelled data"
        with pytest.raises(ConfigurationError) as error:
            self.model.get_metrics(reset=True)
        assert str(error.value).startswith(message)

    def test_a_training_step_without_labels_is_an_error_naming_the_line(self):
        test_file = GLUE / "MRPC/test.tsv"
        self.set_up_model(CONFIGS_ROOT / "glue/mrpc.jsonnet", test_file)
        batch = Batch(self.instances)
        batch.index_instances(self.vocab)
        self.model.train()
        with pytest.raises(ConfigurationError) as error:
            self.model(**batch.as_tensor_dict())
        assert str(error.value).startswith(f"{test_file}:2: no labels: training needs labelled")

    def test_loss_only_with_labels(self):
        self.set_up_model(CONFIGS_ROOT / "glue/rte.jsonnet", GLUE / "RTE/train.tsv")
        fields = {name: field for name, field in self.instances[0].fields.items()}
        del fields["label"]
        unlabelled = self.model.forward_on_instance(Instance(fields))
        assert "loss" not in unlabelled
        labelled = self.model.forward_on_instance(self.instances[0])
        assert labelled["loss"] > 0

    def test_the_last_layer_runs_for_the_cls_position_only_with_the_same_result(self):
        self.set_up_model(CONFIGS_ROOT / "glue/mrpc.jsonnet", GLUE / "MRPC/train.tsv")
        self.model.eval()
        embedder = self.model._text_field_embedder._token_embedders["tokens"]
        seen = []
        embedder.transformer_model.encoder.layer[-1].output.dense.register_forward_hook(
            lambda module, inputs, output: seen.append(inputs[0].shape[1])
        )
        fast = self.model.forward_on_instances(self.instances)
        self.model._first_token_only = False
        full = self.model.forward_on_instances(self.instances)
        # One position in the last layer's feed-forward, then the whole padded batch.
        assert seen[0] == 1 and seen[1] > 1
        for mine, theirs in zip(fast, full):
            assert mine["probs"] == pytest.approx(theirs["probs"], abs=1e-6)

    def test_an_empty_padding_batch_trains_nothing_and_counts_nothing(self):
        """The empty batches `tft_streaming` gives a distributed worker whose data ran out."""
        self.set_up_model(CONFIGS_ROOT / "glue/stsb.jsonnet", GLUE / "STS-B/train.tsv")
        batch = Batch(self.instances)
        batch.index_instances(self.vocab)
        empty = empty_batch(batch.as_tensor_dict())
        self.model.train()
        output = self.model(**empty)
        assert output["loss"].item() == 0.0 and output["score"].shape == (0,)
        output["loss"].backward()
        # Every parameter gets a (zero) gradient, so that DDP's backward completes.
        for name, parameter in self.model.named_parameters():
            assert parameter.grad is not None and not parameter.grad.any(), name
        self.model.eval()
        assert "loss" not in self.model(**empty)  # not counted in the validation loss
        assert self.model.get_metrics(reset=True) == {
            "pearson": 0.0,
            "spearman": 0.0,
            "combined_score": 0.0,
        }


def test_the_bert_pooler_head_starts_from_the_checkpoints_pooler(tiny_bert):
    """docs/configs.md: `"model.seq2vec_encoder": {"type": "bert_pooler", ...}` puts BERT's
    pretrained tanh pooler in front of the classifier; the configs' embedder keeps it available."""
    from allennlp.common import Params
    from allennlp.data import Vocabulary
    from allennlp.models import Model
    from transformers import AutoModel

    overrides = {"model.seq2vec_encoder": {"type": "bert_pooler", "pretrained_model": tiny_bert}}
    params = Params.from_file(str(CONFIGS_ROOT / "glue/mrpc.jsonnet"), json.dumps(overrides))
    vocab = Vocabulary.from_params(params.pop("vocabulary"), instances=[])
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    pretrained = AutoModel.from_pretrained(tiny_bert).pooler.dense.weight
    assert torch.equal(model._seq2vec_encoder.pooler.dense.weight, pretrained)
    assert model._text_field_embedder._token_embedders["tokens"].transformer_model.pooler is None
