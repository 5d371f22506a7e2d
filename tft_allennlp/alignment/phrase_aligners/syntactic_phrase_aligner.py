from typing import Dict, List, Optional

import numpy

from tft_allennlp.alignment.phrase_aligner import ParsedSentence, align
from tft_allennlp.alignment.phrase_aligners.phrase_aligner import PhraseAligner


@PhraseAligner.register("tft_syntactic")
class SyntacticPhraseAligner(PhraseAligner):
    """
    The project's aligner (`tft_allennlp.alignment.phrase_aligner`, where the method is
    described): words linked one-to-one by form and lemma, optionally by contextual-embedding
    similarity, and syntactic phrases aligned when the links inside them agree.

    Registered as a `PhraseAligner` with name "tft_syntactic".

    # Parameters

    embeddings : `str`, optional (default = `None`)
        A local Hugging Face checkpoint; if given, content words left unlinked by lexical
        evidence are linked by mutual-argmax cosine similarity of its contextual word vectors.
    similarity_threshold : `float`, optional (default = `0.5`)
        The least cosine that links two words that way.
    """

    def __init__(self, embeddings: Optional[str] = None, similarity_threshold: float = 0.5) -> None:
        self._embedder = WordEmbedder(embeddings) if embeddings else None
        self._threshold = similarity_threshold

    def align(self, source: ParsedSentence, target: ParsedSentence) -> Dict:
        similarity = None
        if self._embedder is not None:
            similarity = self._embedder.similarity(source.words, target.words)
        return align(source, target, similarity, self._threshold)


class WordEmbedder:
    """Contextual word vectors (mean of the last layer over a word's wordpieces)."""

    def __init__(self, model_path: str) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        self._torch = torch
        self._tokenizer = AutoTokenizer.from_pretrained(model_path)
        self._model = AutoModel.from_pretrained(model_path, add_pooling_layer=False).eval()

    def vectors(self, words: List[str]) -> numpy.ndarray:
        torch = self._torch
        encoding = self._tokenizer(
            words, is_split_into_words=True, return_tensors="pt", truncation=True, max_length=512
        )
        with torch.no_grad():
            # Shape: (num_wordpieces, hidden_dim)
            hidden = self._model(**encoding).last_hidden_state[0]
        vectors = numpy.zeros((len(words), hidden.size(-1)), dtype=numpy.float32)
        counts = numpy.zeros(len(words))
        for piece, word in enumerate(encoding.word_ids()):
            if word is not None:
                vectors[word] += hidden[piece].numpy()
                counts[word] += 1
        vectors /= numpy.maximum(counts, 1)[:, None]
        return vectors / numpy.maximum(numpy.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)

    def similarity(self, source: List[str], target: List[str]) -> numpy.ndarray:
        return self.vectors(source) @ self.vectors(target).T
