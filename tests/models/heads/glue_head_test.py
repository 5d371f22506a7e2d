import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.models.heads import Head
from transformers import AutoConfig

from tft_allennlp.models.heads import GlueHead
from tft_allennlp.modules.glue_task_output import GlueTaskOutput


def _vocab() -> Vocabulary:
    return Vocabulary(tokens_to_add={"labels": ["0", "1"]}, non_padded_namespaces=["labels"])


def _inputs():
    torch.manual_seed(0)
    # Shape: (batch_size, num_wordpieces, embedding_dim)
    encoded = torch.randn(3, 5, 8)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 1, 0, 0, 0]]).bool()
    return encoded, mask


@pytest.mark.parametrize(
    "task, label",
    [("mrpc", torch.tensor([0, 1, 1])), ("stsb", torch.tensor([0.5, 4.0, 2.5]))],
)
def test_outputs_equal_glue_task_output_on_the_cls_vector(task, label):
    vocab = _vocab()
    head = GlueHead(vocab, task, embedding_dim=8).eval()
    reference = GlueTaskOutput(vocab, task, 8).eval()
    reference.load_state_dict(head._task_output.state_dict())
    encoded, mask = _inputs()

    output = head(encoded, mask, label)
    expected = reference(encoded[:, 0], label)

    assert output.keys() == expected.keys() and "loss" in output
    for key in output:
        assert torch.allclose(output[key], expected[key]), key
    assert head.get_metrics(reset=True) == reference.get_metrics(reset=True)


def test_pooler_and_dropout_come_from_the_config(tiny_bert):
    head = Head.from_params(
        Params(
            {
                "type": "tft_glue_head",
                "task": "sst2",
                "model_name": tiny_bert,
                "seq2vec_encoder": {"type": "boe", "embedding_dim": 32, "averaged": True},
                "dropout": 0.3,
            }
        ),
        vocab=_vocab(),
    )
    assert AutoConfig.from_pretrained(tiny_bert).hidden_size == 32
    assert head._task_output._dropout.p == 0.3
    encoded, mask = torch.randn(2, 4, 32), torch.ones(2, 4).bool()
    head.eval()
    mean = encoded.mean(dim=1)
    assert torch.allclose(head(encoded, mask)["logits"], head._task_output(mean)["logits"])


def test_the_default_pooler_needs_a_size():
    with pytest.raises(ConfigurationError, match="embedding_dim or model_name"):
        GlueHead(_vocab(), "sst2")


def test_human_readable_labels_only_where_the_head_predicted():
    head = GlueHead(_vocab(), "sst2", embedding_dim=8).eval()
    encoded, mask = _inputs()
    output = head.make_output_human_readable(head(encoded, mask))
    assert output["label"] == [["0", "1"][i] for i in output["probs"].argmax(dim=-1).tolist()]
    # MultiTaskModel calls every head, also those without outputs in the batch.
    assert head.make_output_human_readable({}) == {}


def test_main_score_is_the_combined_score_or_the_single_metric():
    assert GlueHead.main_score({"accuracy": 0.5, "f1": 0.7, "combined_score": 0.6}) == 0.6
    assert GlueHead.main_score({"mcc": 0.25}) == 0.25
