"""
The smoothness-inducing term's way into a model: the embedding layers of its transformers, and
a forward hook on them that adds a perturbation to their outputs.
"""

import contextlib
from typing import Callable, Iterator, List, Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.modules.token_embedders import PretrainedTransformerEmbedder


def embedding_layers(model: torch.nn.Module) -> List[torch.nn.Module]:
    """
    The embedding layer (`transformer_model.embeddings`) of the transformer of every
    `PretrainedTransformerEmbedder` in `model`, each once; a `ConfigurationError` naming the
    model where there is none, or where a transformer has no `embeddings` module.
    """
    layers: List[torch.nn.Module] = []
    for module in model.modules():
        if not isinstance(module, PretrainedTransformerEmbedder):
            continue
        transformer = module.transformer_model
        embeddings = getattr(transformer, "embeddings", None)
        if not isinstance(embeddings, torch.nn.Module):
            raise ConfigurationError(
                f"tft_smart: the transformer {type(transformer).__name__} "
                f"({getattr(transformer.config, '_name_or_path', '?')}) has no `embeddings` "
                "module to perturb."
            )
        if all(embeddings is not layer for layer in layers):
            layers.append(embeddings)
    if not layers:
        raise ConfigurationError(
            f"tft_smart: {type(model).__name__} has no pretrained_transformer embedder whose "
            "embedding layer the adversarial term could perturb."
        )
    return layers


class EmbeddingNoise:
    """
    The forward hook on the embedding layers: outside `adding` it changes nothing; inside, the
    i-th call of any embedding layer returns its output plus the i-th delta.
    """

    def __init__(self) -> None:
        self._active = False
        self._deltas: List[torch.Tensor] = []
        self._replay = False
        self._sample: Optional[Callable[[torch.Tensor], torch.Tensor]] = None
        self._requires_grad = False
        self._calls = 0

    @contextlib.contextmanager
    def adding(
        self,
        deltas: Optional[List[torch.Tensor]],
        sample: Callable[[torch.Tensor], torch.Tensor],
        requires_grad: bool,
    ) -> Iterator[List[torch.Tensor]]:
        """
        One pass that adds `deltas` in call order, or, where `deltas` is `None`, a fresh
        `sample(output)` at each call. Yields the list of the deltas used: leaves that require
        gradient if `requires_grad`.
        """
        self._replay = deltas is not None
        self._deltas = (
            [delta.detach().requires_grad_(requires_grad) for delta in deltas]
            if deltas is not None
            else []
        )
        self._sample = sample
        self._requires_grad = requires_grad
        self._calls = 0
        self._active = True
        try:
            yield self._deltas
        finally:
            self._active = False
        if self._replay and self._calls != len(self._deltas):
            raise RuntimeError(
                f"tft_smart: the embedding layers were called {self._calls} times in a pass, "
                f"{len(self._deltas)} times in the first."
            )

    def __call__(
        self, module: torch.nn.Module, inputs: object, output: torch.Tensor
    ) -> Optional[torch.Tensor]:
        if not self._active:
            return None
        if not isinstance(output, torch.Tensor):
            raise ConfigurationError(
                f"tft_smart: {type(module).__name__} returns {type(output).__name__}, "
                "not a tensor to perturb."
            )
        if self._replay:
            if self._calls >= len(self._deltas):
                raise RuntimeError(
                    "tft_smart: the embedding layers were called more often than in the first "
                    "perturbed pass."
                )
            delta = self._deltas[self._calls]
            if delta.shape != output.shape:
                raise RuntimeError(
                    f"tft_smart: embedding call {self._calls} has shape {tuple(output.shape)}, "
                    f"{tuple(delta.shape)} in the first perturbed pass."
                )
        else:
            assert self._sample is not None
            delta = self._sample(output).detach().requires_grad_(self._requires_grad)
            self._deltas.append(delta)
        self._calls += 1
        return output + delta.to(output.dtype)
