import json

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch
from allennlp.models import Model

from tests import CONFIGS_ROOT, FIXTURES_ROOT
from tft_allennlp.data_loaders.streaming_data_loader import empty_batch

CORPUS = FIXTURES_ROOT / "paraphrase/aligned.jsonl"
INJECTION_CONFIGS = sorted((CONFIGS_ROOT / "injection").glob("*.jsonnet"))
# The fixture corpus has 12 lines: hold out a quarter for validation instead of 5%.
SPLIT = json.dumps(
    {
        "dataset_reader.validation_fraction": 0.25,
        "validation_dataset_reader.validation_fraction": 0.25,
    }
)


class TestParaphraseInjector(ModelTestCase):
    @pytest.mark.parametrize("config", INJECTION_CONFIGS, ids=lambda path: path.stem)
    def test_every_variant_can_train_save_and_load(self, config):
        self.set_up_model(config, CORPUS)
        self.ensure_model_can_train_save_and_load(self.param_file, overrides=SPLIT, seed=1)

    def tensors(self):
        batch = Batch(self.instances)
        batch.index_instances(self.vocab)
        return batch.as_tensor_dict()

    @pytest.mark.parametrize("config", ["tft", "three_way_pp"])
    def test_an_empty_padding_batch_trains_nothing_and_counts_nothing(self, config):
        """The empty batches `tft_streaming` gives a distributed worker whose data ran out."""
        self.set_up_model(CONFIGS_ROOT / f"injection/{config}.jsonnet", CORPUS)
        empty = empty_batch(self.tensors())
        self.model.train()
        output = self.model(**empty)
        assert output["loss"].item() == 0.0 and output["phrase_logits"].shape[0] == 0
        output["loss"].backward()
        # Every parameter gets a (zero) gradient, also through the phrasal head alone.
        for name, parameter in self.model.named_parameters():
            assert parameter.grad is not None and not parameter.grad.any(), name
        self.model.eval()
        assert "loss" not in self.model(**empty)
        assert not any(self.model.get_metrics(reset=True).values())

    def test_a_corpus_without_aligned_phrase_pairs_is_an_error_not_a_score(self):
        """Such a corpus gave phrase metrics of 0.0, and the injection exited 0."""
        records = [json.loads(line) for line in open(CORPUS)]
        corpus = self.TEST_DIR / "unaligned.jsonl"
        corpus.write_text("".join(json.dumps({**r, "alignments": []}) + "\n" for r in records))
        self.set_up_model(CONFIGS_ROOT / "injection/tft.jsonnet", corpus)
        self.model.eval()
        # Without alignments a paraphrase pair has no phrase pair (no paraphrase, so no
        # in-paraphrase negative either), and a random pair's phrase pairs are all `random`: a
        # phrase head made to answer `random` whatever its input is right on every real pair.
        answer = self.vocab.get_token_index("random", "phrase_labels")
        classifier = self.model._phrase_classifier
        with torch.no_grad():
            classifier.weight.zero_()
            classifier.bias.zero_()[answer] = 1.0
        tensors = self.tensors()
        assert (tensors["phrase_labels"] >= 0).any()  # so 1.0 is not the 0.0 of no pairs at all
        self.model(**tensors)
        # Mid-epoch (the progress bar) the metrics are read without complaint.
        assert self.model.get_metrics()["phrase_accuracy"] == 1.0
        with pytest.raises(ConfigurationError) as error:
            self.model.get_metrics(reset=True)
        assert str(error.value).startswith(
            f"{corpus}: no aligned phrase pairs in {len(self.instances)} sentence pairs"
        )
        # Without the phrase head (the +sentence ablation) the same corpus is fine.
        self.set_up_model(CONFIGS_ROOT / "injection/sentence_only.jsonnet", corpus)
        self.model(**self.tensors())
        assert "sentence_accuracy" in self.model.get_metrics(reset=True)

    def test_loss_is_the_sum_of_both_cross_entropies(self):
        self.set_up_model(CONFIGS_ROOT / "injection/tft.jsonnet", CORPUS)
        self.model.eval()
        tensors = self.tensors()
        output = self.model(**tensors)
        mask = output["phrase_mask"]
        sentence_loss = torch.nn.functional.cross_entropy(
            output["sentence_logits"], tensors["label"]
        )
        phrase_loss = torch.nn.functional.cross_entropy(
            output["phrase_logits"][mask], tensors["phrase_labels"][mask]
        )
        assert output["loss"].item() == pytest.approx(
            (sentence_loss + phrase_loss).item(), rel=1e-5
        )
        assert mask.sum().item() == (tensors["phrase_labels"] >= 0).sum().item()
        metrics = self.model.get_metrics(reset=True)
        predicted = output["phrase_logits"].argmax(-1)[mask]
        accuracy = (predicted == tensors["phrase_labels"][mask]).float().mean().item()
        assert metrics["phrase_accuracy"] == pytest.approx(accuracy)
        assert set(metrics) == {
            "sentence_accuracy",
            "phrase_accuracy",
            "phrase_f1_paraphrase",
            "phrase_f1_random",
            "phrase_f1_in_paraphrase",
        }

    def test_feature_dimensions(self):
        self.set_up_model(CONFIGS_ROOT / "injection/tft.jsonnet", CORPUS)
        assert self.model._phrase_classifier.in_features == 4 * 32
        assert self.model._phrase_classifier.out_features == 3
        self.set_up_model(CONFIGS_ROOT / "injection/tft_simple.jsonnet", CORPUS)
        assert self.model._phrase_classifier.in_features == 2 * 32

    def test_ablations_remove_a_head(self):
        self.set_up_model(CONFIGS_ROOT / "injection/sentence_only.jsonnet", CORPUS)
        assert self.model._phrase_classifier is None
        output = self.model(**self.tensors())
        assert "phrase_probs" not in output and set(self.model.get_metrics()) == {
            "sentence_accuracy"
        }
        self.set_up_model(CONFIGS_ROOT / "injection/binary_pp.jsonnet", CORPUS)
        assert self.model._sentence_classifier is None
        assert self.model._phrase_classifier.out_features == 2

    def test_batch_of_padding_spans_only(self):
        """Random instances in binary mode have no phrase pairs: only (-1, -1) padding."""
        self.set_up_model(CONFIGS_ROOT / "injection/binary_pp.jsonnet", CORPUS)
        self.instances = [i for i in self.instances if i["label"].label == "random"]
        tensors = self.tensors()
        assert (tensors["source_spans"] == -1).all()
        output = self.model(**tensors)
        assert output["loss"].item() == 0.0
        assert not output["phrase_mask"].any()

    def test_dimension_mismatch_is_a_configuration_error(self):
        params = Params.from_file(CONFIGS_ROOT / "injection/tft.jsonnet")
        self.set_up_model(CONFIGS_ROOT / "injection/tft.jsonnet", CORPUS)
        model_params = params["model"]
        model_params["span_extractor"]["input_dim"] = 31
        with pytest.raises(ConfigurationError, match="span extractor input dim"):
            Model.from_params(vocab=self.vocab, params=model_params)

    def test_human_readable_phrase_view(self):
        self.set_up_model(CONFIGS_ROOT / "injection/tft.jsonnet", CORPUS)
        self.model.eval()
        output = self.model.forward_on_instance(self.instances[0])
        num_pairs = len(self.instances[0]["metadata"]["phrase_pairs"])
        assert len(output["phrase_paraphrase_probs"]) == len(output["phrase_labels"]) == num_pairs
        assert output["sentence_label"] in {"paraphrase", "random"}
