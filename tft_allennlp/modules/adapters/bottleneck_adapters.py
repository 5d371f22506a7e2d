import logging
import math
from typing import TYPE_CHECKING, Any, Dict, List, Optional, cast

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.nn import Activation

from tft_allennlp.modules.adapters.sublayer_sites import sublayer_sites
from tft_allennlp.modules.adapters.transformer_adapters import TransformerAdapters

if TYPE_CHECKING:  # transformers' model code: imported where a model is made (start-up)
    from transformers import PreTrainedModel

logger = logging.getLogger(__name__)

SUBLAYERS = ("attention", "feed_forward")


class BottleneckAdapter(torch.nn.Module):
    """
    One bottleneck adapter (Houlsby et al., 2019): `h + up(activation(down(h)))`, `d -> m -> d`
    with an internal skip connection, `2md + d + m` parameters. Both projections start from a
    normal distribution of standard deviation `init_std` truncated at two standard deviations
    and zero biases, so the adapter starts close to the identity.
    """

    def __init__(self, hidden_size: int, bottleneck: int, activation: str, init_std: float) -> None:
        super().__init__()
        self.down = torch.nn.Linear(hidden_size, bottleneck)
        self.up = torch.nn.Linear(bottleneck, hidden_size)
        self.activation = Activation.by_name(activation)()
        for projection in (self.down, self.up):
            if init_std > 0:
                torch.nn.init.trunc_normal_(
                    projection.weight, std=init_std, a=-2 * init_std, b=2 * init_std
                )
            else:
                torch.nn.init.zeros_(projection.weight)
            torch.nn.init.zeros_(projection.bias)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        # Shape: (batch_size, num_wordpieces, hidden_size)
        return hidden + self.up(self.activation(self.down(hidden)))


class _ThroughAdapter:
    """
    A forward hook that passes a sublayer projection's output through an adapter. An object
    rather than a closure, so that `copy.deepcopy` of a model hands the copy's projection the
    copy's adapter.
    """

    def __init__(self, adapter: BottleneckAdapter) -> None:
        self.adapter = adapter

    def __call__(self, module: torch.nn.Module, inputs: Any, output: torch.Tensor) -> torch.Tensor:
        return self.adapter(output)


@TransformerAdapters.register("tft_bottleneck")
class BottleneckAdapters(TransformerAdapters):
    """
    Bottleneck adapters in every transformer layer (Houlsby et al., 2019, as re-implemented by
    Mohebbi & Rajaee): one after the output projection of the self-attention sublayer and one
    after that of the feed-forward sublayer, each before the sublayer's dropout, residual
    connection and layer norm (in a pre-norm model, ModernBERT, the layer norm comes before the
    sublayer instead). The transformer's own weights are frozen, except its layers' layer norms
    with `train_layer_norms`.

    Sharing: `share_every = k` uses one set of adapters for `k` consecutive layers (the last
    group is shorter when `k` does not divide the number of layers), and `share_sublayers` uses
    one adapter for both sublayers of those layers. With `d` the hidden size, `m` the
    bottleneck and `L` layers, the adapters have
    `ceil(L / k) * (1 if share_sublayers else 2) * (2md + d + m)` parameters; a shared adapter is
    one module, counted, trained and saved once.

    Mohebbi & Rajaee's variants (their Table 1 counts for BERT-base, `d = 768`, `m = 64`,
    `2md + d + m = 99,136`): "Houlsby" = `share_sublayers: true` (12 adapters, 1,189,632
    parameters); "not shared" = two adapters per layer and `train_layer_norms: true` (24
    adapters and 24 layer norms, 2,416,128; their 3,006,720 also counts BERT's 590,592-parameter
    pooler, which the plugin's `[CLS]` classifier does not use); "3-shared" = `share_every: 3,
    share_sublayers: true` (4 adapters, 396,544).

    The adapters are forward hooks on the projections, so the transformer's own modules and
    parameter names are unchanged: `tft-export` writes it as the checkpoint it was, and the
    adapters beside it.

    Registered as a `TransformerAdapters` with name "tft_bottleneck".

    # Parameters

    bottleneck : `int`, optional (default = `64`)
        `m`, the adapters' inner size.
    activation : `str`, optional (default = `"gelu"`)
        A registered AllenNLP `Activation` name.
    share_every : `int`, optional (default = `1`)
        Number of consecutive layers that share one set of adapters.
    share_sublayers : `bool`, optional (default = `False`)
        One adapter for the attention and the feed-forward sublayer of a layer (group).
    train_layer_norms : `bool`, optional (default = `False`)
        Also train the layer norms of the transformer's layers (two per layer).
    init_std : `float`, optional (default = `0.01`)
        Standard deviation of the projections' initial weights, Houlsby et al.'s near-identity
        initialisation.
    weights_file : `str`, optional
        Adapter weights to start from, written by `tft-export` (`adapters.th`); see
        `tft_exported`.
    """

    def __init__(
        self,
        bottleneck: int = 64,
        activation: str = "gelu",
        share_every: int = 1,
        share_sublayers: bool = False,
        train_layer_norms: bool = False,
        init_std: float = 0.01,
        weights_file: Optional[str] = None,
    ) -> None:
        super().__init__()
        if bottleneck < 1 or share_every < 1:
            raise ConfigurationError(
                f"tft_bottleneck: bottleneck ({bottleneck}) and share_every ({share_every}) "
                "must be positive."
            )
        if activation not in Activation.list_available():
            raise ConfigurationError(
                f"tft_bottleneck: unknown activation {activation!r}; "
                f"choose from {Activation.list_available()}."
            )
        self._bottleneck = bottleneck
        self._activation = activation
        self._share_every = share_every
        self._share_sublayers = share_sublayers
        self._train_layer_norms = train_layer_norms
        self._init_std = init_std
        self._weights_file = weights_file
        self.adapters = torch.nn.ModuleList()
        # Not modules of this one: the hooks' handles, to detach.
        self._handles: List[torch.utils.hooks.RemovableHandle] = []

    def attach(self, transformer: "PreTrainedModel") -> None:
        if self._handles:
            raise ConfigurationError("tft_bottleneck: these adapters are attached already.")
        sites = sublayer_sites(transformer)
        layers = list(cast(torch.nn.ModuleList, transformer.get_submodule(sites.layers)))
        hidden_size = transformer.config.hidden_size
        for parameter in transformer.parameters():
            parameter.requires_grad_(False)
        if self._train_layer_norms:
            for layer in layers:
                for path in sites.layer_norms:
                    layer.get_submodule(path).requires_grad_(True)
        per_group = 1 if self._share_sublayers else len(SUBLAYERS)
        groups = math.ceil(len(layers) / self._share_every)
        for _ in range(groups * per_group):
            self.adapters.append(
                BottleneckAdapter(hidden_size, self._bottleneck, self._activation, self._init_std)
            )
        for number, layer in enumerate(layers):
            for sublayer, path in enumerate(sites.sublayer_outputs):
                index = (number // self._share_every) * per_group + sublayer % per_group
                hook = _ThroughAdapter(self.adapters[index])  # type: ignore[arg-type]
                self._handles.append(layer.get_submodule(path).register_forward_hook(hook))
        if self._weights_file is not None:
            self._load(self._weights_file)
        logger.info(
            "tft_bottleneck: %d adapters (%d parameters) in %d layers of %s, which is frozen%s.",
            len(self.adapters),
            sum(parameter.numel() for parameter in self.adapters.parameters()),
            len(layers),
            transformer.config._name_or_path,
            " except its layer norms" if self._train_layer_norms else "",
        )

    def detach(self) -> None:
        """Removes the hooks: the transformer computes as it did before `attach`."""
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def export_config(self) -> Dict[str, Any]:
        """The parameters that rebuild these adapters (what `tft-export` writes)."""
        return {
            "type": "tft_bottleneck",
            "bottleneck": self._bottleneck,
            "activation": self._activation,
            "share_every": self._share_every,
            "share_sublayers": self._share_sublayers,
            "train_layer_norms": self._train_layer_norms,
            "init_std": self._init_std,
        }

    def _load(self, weights_file: str) -> None:
        try:
            state = torch.load(weights_file, map_location="cpu", weights_only=True)
            self.load_state_dict(state)
        except (OSError, RuntimeError) as error:
            raise ConfigurationError(
                f"tft_bottleneck: cannot load adapter weights from {weights_file}: {error}"
            ) from None
