import json
import os
from typing import TYPE_CHECKING, Any, Dict, Optional

import torch
from allennlp.common import Params, Registrable
from allennlp.common.checks import ConfigurationError

from tft_allennlp.common.transformer_source import archived_copy, transformer_source

if TYPE_CHECKING:  # transformers' model code: imported where a model is made (start-up)
    from transformers import PreTrainedModel

# What `tft-export` writes beside the encoder of a model with adapters.
EXPORTED_CONFIG = "adapters.json"
EXPORTED_WEIGHTS = "adapters.th"


class TransformerAdapters(torch.nn.Module, Registrable):
    """
    Parameter-efficient fine-tuning of a pretrained transformer: new modules are attached to
    the model, its own weights are frozen (all or most of them), and only the new modules (and
    whatever the plugin's model puts on top) are trained. The `tft_pretrained_transformer`
    embedder and backbone take one as `adapters` and attach it after loading the checkpoint:

        "tokens": {"type": "tft_pretrained_transformer", "model_name": ...,
                   "adapters": {"type": "tft_bottleneck", "bottleneck": 64}}

    The modules are created in `attach`, when the model's size is known, and are parameters of
    this module, so of the embedder: checkpoints and archives hold them once, next to the
    transformer's weights.

    `tft-export` merges nothing: it writes the transformer as a checkpoint and the adapters
    beside it, `adapters.json` (`export_config()`) and `adapters.th` (this module's
    `state_dict`). `{"type": "tft_exported", "directory": EXPORT_DIR}` loads them back.

    Register a subclass to try another kind; it implements `attach` and `export_config`, and
    takes a `weights_file` parameter that it loads once attached:

        @TransformerAdapters.register("my_adapters")
        class MyAdapters(TransformerAdapters):
            def attach(self, transformer): ...
            def export_config(self): ...
    """

    default_implementation = "tft_bottleneck"
    # The name of the weights file that `export` writes and `tft_exported` reads.
    exported_weights = EXPORTED_WEIGHTS

    def attach(self, transformer: "PreTrainedModel") -> None:
        """
        Adds the adapters to `transformer` (in place) and freezes its weights. Called once, by
        the embedder, before the optimizer is built.
        """
        raise NotImplementedError

    def export_config(self) -> Dict[str, Any]:
        """The parameters (with `type`) that build these adapters again, before their weights."""
        raise NotImplementedError

    def export(self, directory: str) -> None:
        """Writes `adapters.json` and `adapters.th` to `directory`."""
        self.write_export_config(directory)
        torch.save(self.state_dict(), os.path.join(directory, EXPORTED_WEIGHTS))

    def write_export_config(self, directory: str) -> None:
        """Writes `adapters.json`, `export_config()`, to `directory`: what `tft_exported` reads."""
        with open(os.path.join(directory, EXPORTED_CONFIG), "w") as handle:
            json.dump(self.export_config(), handle, indent=2)

    def unloaded(self, transformer: "PreTrainedModel", merge: bool) -> "PreTrainedModel":
        """
        The transformer as `tft-export` writes its checkpoint: without the adapters (as it was
        before `attach`), or, with `merge`, with them folded into its weights, where the kind can
        be. Adapters that are hooks leave the transformer's modules as they were: it is itself.
        """
        if merge:
            name = self.export_config().get("type", type(self).__name__)
            raise ConfigurationError(
                f"{name} adapters cannot be merged into the encoder's weights; export them "
                "beside it (without --merge-adapters)."
            )
        return transformer

    @classmethod
    def from_export(
        cls, directory: str, serialization_dir: Optional[str] = None
    ) -> "TransformerAdapters":
        """
        The adapters that `tft-export` wrote to `directory` (or to the export of a model archive
        given as `directory`), registered as the constructor "tft_exported":
        `{"type": "tft_exported", "directory": ...}`. In training `adapters.json` is copied into
        the serialization directory with the checkpoint's files, and an archive builds the
        adapters from that copy, their weights coming from the archive's own: the archive does
        not need `directory` (see `tft_allennlp.common.transformer_source`).
        """
        if not os.path.exists(directory) and archived_copy(directory, serialization_dir) is None:
            raise ConfigurationError(f"{directory}: no such directory (tft_exported adapters).")
        source = transformer_source(directory, serialization_dir)
        from_archive = source == archived_copy(directory, serialization_dir)
        path = os.path.join(source, EXPORTED_CONFIG)
        try:
            with open(path) as handle:
                params = json.load(handle)
        except FileNotFoundError:
            raise ConfigurationError(
                f"{path}: no such file; `tft-export` writes it for a model trained with adapters."
            ) from None
        except json.JSONDecodeError as error:
            raise ConfigurationError(f"{path}: not valid JSON: {error}") from None
        if not from_archive:
            kind, _ = cls.resolve_class_name(params.get("type", cls.default_implementation))
            params["weights_file"] = os.path.join(source, kind.exported_weights)
        return cls.from_params(Params(params))


TransformerAdapters.register("tft_exported", constructor="from_export")(TransformerAdapters)
