import numpy
import pytest

from tests.alignment.sentences import BASIC, sentence
from tft_allennlp.alignment.link_rules import SameForm, SameLemma
from tft_allennlp.alignment.word_linker import WordLinker


def test_repeated_words_link_one_to_one_in_order():
    source = sentence("cat saw cat")
    target = sentence("cat and cat", pos=["NOUN", "CCONJ", "NOUN"])
    assert BASIC.link_words(source, target) == {(0, 0), (2, 2)}


def test_identical_function_words_do_not_link():
    source = sentence("the cat", pos=["DET", "NOUN"])
    target = sentence("the dog", pos=["DET", "NOUN"])
    assert BASIC.link_words(source, target) == set()


def test_a_stronger_rank_links_first():
    source = sentence("runs run", lemmas=["run", "run"], pos=["VERB", "VERB"])
    target = sentence("run", lemmas=["run"], pos=["VERB"])
    assert BASIC.link_words(source, target) == {(1, 0)}  # the identical form wins over the lemma
    # In one rank, the closer word in relative position wins.
    assert WordLinker([[SameForm(), SameLemma()]]).link(source, target) == {(0, 0)}


def test_a_similarity_matrix_needs_a_similarity_rule():
    source, target = sentence("cat"), sentence("dog")
    with pytest.raises(ValueError, match="without a similarity rule"):
        WordLinker([[SameForm()]]).link(source, target, numpy.ones((1, 1)))
