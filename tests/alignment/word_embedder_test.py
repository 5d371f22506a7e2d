import numpy
import pytest
from allennlp.common.checks import ConfigurationError

from tft_allennlp.alignment.word_embedder import WordEmbedder


def test_the_embedding_pass_is_batched_with_the_same_vectors(tiny_bert):
    embedder = WordEmbedder(tiny_bert, batch_size=2)
    sentences = [["the", "cat", "sat"], ["a"], ["dogs", "run", "in", "the", "park", "today"]]
    batched = embedder.vectors_batch(sentences)
    assert len(batched) == len(sentences)
    for words, vectors in zip(sentences, batched):
        assert vectors.shape == (len(words), 32)
        numpy.testing.assert_allclose(vectors, embedder.vectors(words), atol=1e-5)
        numpy.testing.assert_allclose(numpy.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_middle_layer_gives_that_hidden_state_with_the_upper_layers_dropped(tiny_bert):
    import torch
    from transformers import AutoModel, AutoTokenizer

    words = ["dogs", "run", "in", "the", "park"]
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    full = AutoModel.from_pretrained(tiny_bert, add_pooling_layer=False).eval()
    encoding = tokenizer([words], is_split_into_words=True, return_tensors="pt")
    with torch.no_grad():
        states = full(**encoding, output_hidden_states=True).hidden_states
    word_ids = encoding.word_ids(0)
    for layer, state in ((0, 0), (1, 1), (-1, 2), (2, 2)):
        embedder = WordEmbedder(tiny_bert, layer=layer)
        # The tiny BERT has 2 layers; those above the one read are gone.
        assert len(embedder._model.encoder.layer) == state
        expected = numpy.stack(
            [
                states[state][0, [p for p, w in enumerate(word_ids) if w == k]].mean(0).numpy()
                for k in range(len(words))
            ]
        )
        expected /= numpy.linalg.norm(expected, axis=1, keepdims=True)
        numpy.testing.assert_allclose(embedder.vectors(words), expected, atol=1e-5)
    # Each layer's vectors differ: the option is not ignored.
    assert not numpy.allclose(
        WordEmbedder(tiny_bert, layer=1).vectors(words), WordEmbedder(tiny_bert).vectors(words)
    )
    for layer in (3, -4):
        with pytest.raises(ConfigurationError, match=f"embedding_layer {layer} is out of range"):
            WordEmbedder(tiny_bert, layer=layer)
