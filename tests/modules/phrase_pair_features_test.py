import torch
from allennlp.common import Params

from tft_allennlp.modules.phrase_pair_features import PhrasePairFeatures

SOURCE = torch.tensor([[[1.0, -2.0]]])
TARGET = torch.tensor([[[3.0, 4.0]]])


def test_elaborate_features():
    features = PhrasePairFeatures.from_params(Params({"type": "tft_elaborate"}))
    assert features.get_output_dim(2) == 8
    assert features(SOURCE, TARGET).tolist() == [[[1.0, -2.0, 3.0, 4.0, 3.0, -8.0, 2.0, 6.0]]]


def test_simple_features():
    features = PhrasePairFeatures.from_params(Params({"type": "tft_concat"}))
    assert features.get_output_dim(2) == 4
    assert features(SOURCE, TARGET).tolist() == [[[1.0, -2.0, 3.0, 4.0]]]
