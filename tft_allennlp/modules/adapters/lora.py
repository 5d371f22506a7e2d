"""
LoRA (Hu et al., 2021) as an adapter kind of the embedder and backbone, through `peft`, the
maintained library for it: `"adapters": {"type": "lora", "r": 8, "alpha": 16}`.
"""

import copy
import logging
import os
from typing import TYPE_CHECKING, Any, Dict, List, Optional

import torch
from allennlp.common.checks import ConfigurationError

from tft_allennlp.modules.adapters.transformer_adapters import TransformerAdapters

if TYPE_CHECKING:  # transformers' model code: imported where a model is made (start-up)
    from transformers import PreTrainedModel

logger = logging.getLogger(__name__)

# The projections LoRA adapts by default: the LoRA paper's choice for its GLUE models (its
# section 7.1), the self-attention's query and value projections; ModernBERT projects query, key
# and value in one linear layer, which is adapted whole.
TARGET_MODULES = {
    "bert": ["query", "value"],
    "roberta": ["query", "value"],
    "electra": ["query", "value"],
    "distilbert": ["q_lin", "v_lin"],
    "mpnet": ["q", "v"],
    "deberta-v2": ["query_proj", "value_proj"],
    "modernbert": ["Wqkv"],
}
# What `export` writes beside the encoder: peft's own adapter folder (`PeftModel.from_pretrained`
# loads it), whose weights are named as in a `PeftModel` around the exported encoder. A folder of
# its own: transformers' `from_pretrained` of a folder holding `adapter_config.json` would load
# the adapter onto the base that config names, not the plain encoder beside it.
PEFT_FOLDER = "peft_adapter"
PEFT_WEIGHTS = "adapter_model.safetensors"
PEFT_PREFIX = "base_model.model."
ADAPTER_NAME = "default"


@TransformerAdapters.register("lora")
class LoraAdapters(TransformerAdapters):
    """
    Low-rank adaptation: each target linear layer `W` of the transformer computes
    `W x + (alpha / r) B A x`, with `A` (`r x d_in`) initialised at random and `B` (`d_out x r`)
    at zero, so that the adapted model starts as the checkpoint; only the `A`s and `B`s train
    (`r (d_in + d_out)` parameters a target), the transformer's own weights and biases are
    frozen. `peft` puts its LoRA layers in place of the targets: their weights are parameters of
    the transformer (`...query.lora_A.default.weight`), whose own move one level down
    (`...query.base_layer.weight`), so checkpoints and archives hold them once, with the rest of
    the embedder. The fused eager attention sends adapted projections through the plain path.

    `tft-export` writes the encoder unchanged with peft's adapter folder beside it
    (`OUT/peft_adapter`: `PeftModel.from_pretrained(AutoModel.from_pretrained(OUT),
    OUT + "/peft_adapter")`, or `{"type": "tft_exported", "directory": OUT}` here), or, with
    `--merge-adapters`, one plain checkpoint with `W + (alpha / r) B A` in place of each `W`.

    Registered as a `TransformerAdapters` with name "lora".

    # Parameters

    r : `int`, optional (default = `8`)
        The rank of the update.
    alpha : `int`, optional (default = `8`)
        The update is scaled by `alpha / r` (peft's `lora_alpha`).
    dropout : `float`, optional (default = `0.0`)
        Dropout on the adapted layer's input, in the LoRA branch only.
    target_modules : `List[str]`, optional
        Names (the last part of a module path) of the linear layers to adapt; by default the
        architecture's query and value projections (`TARGET_MODULES`).
    weights_file : `str`, optional
        LoRA weights to start from, as `tft-export` writes them
        (`peft_adapter/adapter_model.safetensors`); see `tft_exported`.
    """

    exported_weights = os.path.join(PEFT_FOLDER, PEFT_WEIGHTS)

    def __init__(
        self,
        r: int = 8,
        alpha: int = 8,
        dropout: float = 0.0,
        target_modules: Optional[List[str]] = None,
        weights_file: Optional[str] = None,
    ) -> None:
        super().__init__()
        if r < 1 or alpha <= 0 or not 0 <= dropout < 1:
            raise ConfigurationError(
                f"lora: r ({r}) and alpha ({alpha}) must be positive and dropout ({dropout}) in "
                "[0, 1)."
            )
        if target_modules is not None and not target_modules:
            raise ConfigurationError("lora: target_modules is empty; name at least one layer.")
        self._r = r
        self._alpha = alpha
        self._dropout = dropout
        self._target_modules = target_modules
        self._weights_file = weights_file
        # Not a module of this one: the transformer the LoRA layers are in (the embedder's).
        self._transformer: List["PreTrainedModel"] = []

    def attach(self, transformer: "PreTrainedModel") -> None:
        from peft import inject_adapter_in_model

        if self._transformer:
            raise ConfigurationError("lora: these adapters are attached already.")
        targets = self._targets(transformer.config.model_type)
        for parameter in transformer.parameters():
            parameter.requires_grad_(False)
        try:
            inject_adapter_in_model(self._peft_config(targets), transformer, ADAPTER_NAME)
        except ValueError as error:  # peft's "Target modules ... not found in the base model"
            raise ConfigurationError(f"lora: {error}") from None
        self._transformer.append(transformer)
        if self._weights_file is not None:
            self._load(self._weights_file)
        logger.info(
            "lora: rank %d on %d layers (%d parameters) of %s, which is frozen.",
            self._r,
            len(self._lora_layers()),
            sum(parameter.numel() for _, parameter in self._lora_parameters()),
            transformer.config._name_or_path,
        )

    def export_config(self) -> Dict[str, Any]:
        """The parameters that rebuild these adapters (what `tft-export` writes)."""
        return {
            "type": "lora",
            "r": self._r,
            "alpha": self._alpha,
            "dropout": self._dropout,
            "target_modules": self._target_modules,
        }

    def export(self, directory: str) -> None:
        """
        Writes `adapters.json` and peft's adapter folder (`peft_adapter/adapter_config.json`,
        `peft_adapter/adapter_model.safetensors`) to `directory`, beside the encoder that
        `unloaded` gives.
        """
        from safetensors.torch import save_file

        transformer = self._attached()
        self.write_export_config(directory)
        folder = os.path.join(directory, PEFT_FOLDER)
        config = self._peft_config(self._targets(transformer.config.model_type))
        config.base_model_name_or_path = transformer.config._name_or_path
        config.save_pretrained(folder)
        parameters = dict(self._lora_parameters())
        state = {
            key: parameters[name].detach().contiguous() for key, name in self._peft_names().items()
        }
        save_file(state, os.path.join(folder, PEFT_WEIGHTS), metadata={"format": "pt"})

    def unloaded(self, transformer: "PreTrainedModel", merge: bool) -> "PreTrainedModel":
        """
        A copy of `transformer` with each LoRA layer replaced by the layer it adapts: as the
        checkpoint was (the frozen weights), or with `merge` the adapted weights
        `W + (alpha / r) B A`, a plain model that computes what the adapted one does.
        """
        unloaded = copy.deepcopy(transformer)
        for path, layer in self._lora_layers(unloaded):
            if merge:
                layer.merge(safe_merge=True)
            parent, _, name = path.rpartition(".")
            setattr(unloaded.get_submodule(parent), name, layer.get_base_layer())
        return unloaded

    def _targets(self, model_type: str) -> List[str]:
        if self._target_modules is not None:
            return list(self._target_modules)
        if model_type not in TARGET_MODULES:
            raise ConfigurationError(
                f"lora: no default target_modules for the architecture {model_type!r} "
                f"(known: {sorted(TARGET_MODULES)}); name its linear layers in target_modules."
            )
        return TARGET_MODULES[model_type]

    def _peft_config(self, targets: List[str]) -> Any:
        from peft import LoraConfig

        return LoraConfig(
            r=self._r,
            lora_alpha=self._alpha,
            lora_dropout=self._dropout,
            target_modules=targets,
            bias="none",
        )

    def _attached(self) -> "PreTrainedModel":
        if not self._transformer:
            raise ConfigurationError("lora: the adapters are not attached to a transformer.")
        return self._transformer[0]

    def _lora_layers(self, model: Optional[torch.nn.Module] = None) -> List[Any]:
        from peft.tuners.lora import LoraLayer

        model = self._attached() if model is None else model
        return [
            (path, module)
            for path, module in model.named_modules()
            if isinstance(module, LoraLayer)
        ]

    def _lora_parameters(self) -> List[Any]:
        return [
            (name, parameter)
            for name, parameter in self._attached().named_parameters()
            if ".lora_" in name
        ]

    def _peft_names(self) -> Dict[str, str]:
        """The name of each LoRA weight in peft's adapter file -> its name in the transformer."""
        return {
            PEFT_PREFIX + name.replace(f".{ADAPTER_NAME}.", "."): name
            for name, _ in self._lora_parameters()
        }

    def _load(self, weights_file: str) -> None:
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        try:
            state = load_file(weights_file)
        except (OSError, SafetensorError) as error:
            raise ConfigurationError(
                f"lora: cannot load adapter weights from {weights_file}: {error}"
            ) from None
        parameters = dict(self._lora_parameters())
        expected = self._peft_names()
        if set(state) != set(expected):
            missing = sorted(set(expected) - set(state))[:3]
            unexpected = sorted(set(state) - set(expected))[:3]
            raise ConfigurationError(
                f"lora: {weights_file} does not fit these adapters (missing {missing}, "
                f"unexpected {unexpected})."
            )
        with torch.no_grad():
            for key, name in expected.items():
                if state[key].shape != parameters[name].shape:
                    raise ConfigurationError(
                        f"lora: {weights_file}: {key} has shape {tuple(state[key].shape)}, "
                        f"these adapters {tuple(parameters[name].shape)}."
                    )
                parameters[name].copy_(state[key])
