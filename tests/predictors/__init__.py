import copy

from allennlp.predictors import Predictor


def unread(predictor: Predictor) -> Predictor:
    """
    A copy of `predictor` (the same model, reader and aligner) that has loaded no input lines
    yet, as in a new `allennlp predict` run, so that its line numbers start again at 1.
    """
    copied = copy.copy(predictor)
    copied._lines_loaded = 0
    return copied
