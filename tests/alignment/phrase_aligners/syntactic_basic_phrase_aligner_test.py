from tests.alignment.sentences import BASIC, show
from tft_allennlp.alignment.phrase_aligners import PhraseAligner


def test_the_basic_rules_pair_by_consistency_and_length_alone(pipeline):
    """Without rules 4 and 5, the closest-length rule alone chooses "in the park" / "through
    the park" over "in the park" / "the park"."""
    texts = ["Two dogs are running in the park.", "Two dogs run through the park."]
    pairs = show(BASIC.align(*pipeline.parse_text(texts)))
    assert ("in the park", "through the park") in pairs
    assert ("in the park", "the park") not in pairs
    assert type(PhraseAligner.by_name("tft_syntactic_basic")()) is type(BASIC)
