import os

import torch
from allennlp.common import Params
from allennlp.modules.token_embedders import TokenEmbedder


def build(**kwargs):
    params = {"type": "tft_pretrained_transformer", "model_name": os.environ["TFT_MODEL"], **kwargs}
    return TokenEmbedder.from_params(Params(params))


def test_the_pooler_is_dropped_unless_kept():
    assert build().transformer_model.pooler is None
    assert build(keep_pooler=True).transformer_model.pooler is not None


def test_an_empty_batch_gives_empty_hidden_states():
    embedder = build()
    ids = torch.zeros(0, 7, dtype=torch.long)
    hidden = embedder(
        ids, torch.ones(0, 7, dtype=torch.bool), type_ids=torch.zeros(0, 7, dtype=torch.long)
    )
    assert hidden.shape == (0, 7, embedder.get_output_dim())
    # A real batch with segment ids still goes through AllenNLP's own handling of them.
    ids = torch.tensor([[2, 40, 3, 41, 3]])
    hidden = embedder(
        ids, torch.ones(1, 5, dtype=torch.bool), type_ids=torch.tensor([[0, 0, 0, 1, 1]])
    )
    assert hidden.shape == (1, 5, embedder.get_output_dim())
