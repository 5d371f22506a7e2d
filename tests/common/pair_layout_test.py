import dataclasses

import pytest
import torch
from allennlp.common import Params
from allennlp.data import Token, Vocabulary
from allennlp.data.fields import TextField
from allennlp.data.tokenizers import PretrainedTransformerTokenizer
from allennlp.modules.token_embedders import TokenEmbedder

from tests.tiny_models import ARCHITECTURES, write_tiny_model
from tft_allennlp.common.pair_layout import PairEncoder

SENTENCES = [
    ("the cat sat on the mat .", "a cat was sitting on a mat"),
    ("he said it would rain tomorrow", "it will rain , he said"),
    ("numbers 12 and 34", None),
]


def fields(token):
    # Every attribute of AllenNLP's token (tokenizers set lemma_, pos_, ... to None).
    return tuple(getattr(token, name) for name in Token.__slots__)


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_joined_pairs_are_allennlps_with_the_models_segment_ids(tmp_path, architecture):
    model_name = write_tiny_model(architecture, str(tmp_path / architecture))
    tokenizer = PretrainedTransformerTokenizer(model_name, add_special_tokens=False)
    encoder = PairEncoder(tokenizer, max_length=12, owner="test")
    for first_text, second_text in SENTENCES:
        first = tokenizer.tokenize(first_text)
        second = None if second_text is None else tokenizer.tokenize(second_text)
        joined = encoder.join(first, second)
        # AllenNLP's own joining of the kept wordpieces, every segment id 0 where the model has
        # no segment embeddings (as the encoder did before it joined them itself).
        kept_first = first[: joined.lengths[0]]
        if second is None:
            expected = tokenizer.add_special_tokens(kept_first)
        else:
            expected = tokenizer.add_special_tokens(kept_first, second[: joined.lengths[1]])
        if not encoder.segment_ids:
            expected = [dataclasses.replace(token, type_id=0) for token in expected]
        assert [fields(t) for t in joined.tokens] == [fields(t) for t in expected]
        assert len(joined.tokens) <= 12
    # BERT's pair: [CLS] first [SEP] with segment 0, second [SEP] with segment 1.
    if architecture == "bert":
        joined = encoder.join(tokenizer.tokenize("the cat"), tokenizer.tokenize("a cat"))
        assert [t.text for t in joined.tokens] == "[CLS] the cat [SEP] a cat [SEP]".split()
        assert [t.type_id for t in joined.tokens] == [0, 0, 0, 0, 1, 1, 1]
    # The inputs' tokens are left as they were.
    assert all(token.type_id in (0, None) for token in tokenizer.tokenize("a cat was sitting"))


def test_a_modernbert_pair_by_hand(tmp_path):
    """
    ModernBERT's pair layout, `[CLS] s [SEP] t [SEP]` without segment ids, and word spans traced
    by hand through the tiny tokenizer's merges: each word is read with the space before it, as
    in running text ("Ġplay s", "Ġf l ut e", "Ġdo gs"; without the space "the" would be "t he").
    """
    model_name = write_tiny_model("modernbert", str(tmp_path / "modernbert"))
    tokenizer = PretrainedTransformerTokenizer(model_name, add_special_tokens=False)
    encoder = PairEncoder(tokenizer, max_length=40, owner="test")
    layout = encoder.layout("a man plays the flute".split(), "two dogs run".split())
    assert [t.text for t in layout.tokens] == [
        "[CLS]", "Ġa", "Ġman", "Ġplay", "s", "Ġthe", "Ġf", "l", "ut", "e", "[SEP]",  # 0-10
        "Ġtwo", "Ġdo", "gs", "Ġrun", "[SEP]",  # 11-15
    ]  # fmt: skip
    assert [layout.tokens[i].text_id for i in (0, 10, 15)] == [1, 2, 2]  # [CLS], [SEP], [SEP]
    assert [t.type_id for t in layout.tokens] == [0] * 16 and not encoder.segment_ids
    # "plays", "flute", "man plays"; "dogs", "two dogs run".
    assert [layout.source_span(span) for span in [(2, 2), (4, 4), (1, 2)]] == [
        (3, 4),
        (6, 9),
        (2, 4),
    ]
    assert [layout.target_span(span) for span in [(1, 1), (0, 2)]] == [(12, 13), (11, 14)]
    # The model is called without segment ids.
    field = TextField(layout.tokens, encoder.default_indexers())
    field.index(Vocabulary())
    tensors = field.batch_tensors([field.as_tensor(field.get_padding_lengths())])
    embedder = TokenEmbedder.from_params(
        Params({"type": "tft_pretrained_transformer", "model_name": model_name})
    ).eval()
    calls = []
    embedder.transformer_model.register_forward_pre_hook(
        lambda module, args, kwargs: calls.append(kwargs), with_kwargs=True
    )
    states = embedder(**tensors["tokens"])
    assert states.shape == (1, 16, 32)
    assert len(calls) == 1 and "token_type_ids" not in calls[0]
    # The GLUE classifier's `[CLS]` only: the full pass, cut (the last-layer shortcut is BERT's
    # and RoBERTa's).
    assert not embedder._first_token_path()
    assert torch.equal(embedder(**tensors["tokens"], first_token_only=True), states[:, :1])
