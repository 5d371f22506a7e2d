import dataclasses

import pytest
from allennlp.data import Token
from allennlp.data.tokenizers import PretrainedTransformerTokenizer

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
