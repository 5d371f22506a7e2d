import numpy

from tests.alignment.sentences import sentence
from tft_allennlp.alignment.phrase_aligners import MutualArgmaxPhraseAligner
from tft_allennlp.alignment.word_embedder import WordEmbedder


def test_mutual_argmax_links_cells_best_in_their_row_and_column():
    similarity = numpy.array([[0.9, 0.5, 0.1], [0.95, 0.2, 0.3], [0.1, 0.6, 0.5]])
    # Row 0's best is column 0, whose best is row 1: no link; row 1 ~ column 0; row 2 ~ 1.
    assert MutualArgmaxPhraseAligner.mutual_argmax(similarity) == {(1, 0), (2, 1)}


def test_every_word_links_by_the_model_alone(tiny_bert):
    aligner = MutualArgmaxPhraseAligner(tiny_bert, embedding_layer=1, embedding_batch_size=2)
    source = sentence("the dog barks", pos=["DET", "NOUN", "VERB"], phrases=[(1, 1), (2, 2)])
    target = sentence("a dog barks loudly", pos=["DET", "NOUN", "VERB", "ADV"])
    target = target._replace(phrases=[(1, 1), (2, 2), (3, 3), (1, 3)])
    embedder = WordEmbedder(tiny_bert, layer=1)
    expected = MutualArgmaxPhraseAligner.mutual_argmax(
        embedder.vectors(source.words) @ embedder.vectors(target.words).T
    )
    records = aligner.align_batch([(source, target), (target, source)])
    assert {tuple(link) for link in records[0]["word_links"]} == expected
    assert {(j, i) for i, j in records[1]["word_links"]} == expected
