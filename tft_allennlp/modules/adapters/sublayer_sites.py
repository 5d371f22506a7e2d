"""
Where adapters go in each Hugging Face architecture the plugin supports: the module list of
transformer layers, and inside each layer the output projections of the two sublayers
(self-attention, feed-forward) and the layer's two layer norms: those that follow the residual
connections in post-norm models (BERT and the others), those that precede the sublayers in
ModernBERT, a pre-norm model.
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, Tuple

from allennlp.common.checks import ConfigurationError

if TYPE_CHECKING:  # transformers' model code: imported where a model is made (start-up)
    from transformers import PreTrainedModel


@dataclass(frozen=True)
class SublayerSites:
    """
    Module paths in one architecture.

    # Parameters

    layers : `str`
        Path of the `ModuleList` of transformer layers, from the model.
    attention_output : `str`
        Path, from a layer, of the attention sublayer's output projection (`d -> d`), whose
        output then goes through dropout, the residual connection and a layer norm.
    feed_forward_output : `str`
        Path, from a layer, of the feed-forward sublayer's output projection (`d_ff -> d`).
    layer_norms : `Tuple[str, str]`
        Paths, from a layer, of the two layer norms: after the residual connections in a
        post-norm model, before the sublayers in a pre-norm one (ModernBERT's first layer has
        an identity in place of the first: its embeddings are normalised already).
    """

    layers: str
    attention_output: str
    feed_forward_output: str
    layer_norms: Tuple[str, str]

    @property
    def sublayer_outputs(self) -> Tuple[str, str]:
        return (self.attention_output, self.feed_forward_output)


_BERT_LIKE = SublayerSites(
    layers="encoder.layer",
    attention_output="attention.output.dense",
    feed_forward_output="output.dense",
    layer_norms=("attention.output.LayerNorm", "output.LayerNorm"),
)

# Hugging Face `model_type` -> sites. Each is covered by a tiny model in the tests.
SITES: Dict[str, SublayerSites] = {
    "bert": _BERT_LIKE,
    "roberta": _BERT_LIKE,
    "electra": _BERT_LIKE,
    "deberta-v2": _BERT_LIKE,
    "mpnet": SublayerSites(
        layers="encoder.layer",
        attention_output="attention.attn.o",
        feed_forward_output="output.dense",
        layer_norms=("attention.LayerNorm", "output.LayerNorm"),
    ),
    "distilbert": SublayerSites(
        layers="transformer.layer",
        attention_output="attention.out_lin",
        feed_forward_output="ffn.lin2",
        layer_norms=("sa_layer_norm", "output_layer_norm"),
    ),
    "modernbert": SublayerSites(
        layers="layers",
        attention_output="attn.Wo",
        feed_forward_output="mlp.Wo",
        layer_norms=("attn_norm", "mlp_norm"),
    ),
}


def sublayer_sites(transformer: "PreTrainedModel") -> SublayerSites:
    """The sites of `transformer`'s architecture, or a `ConfigurationError` naming it."""
    model_type = transformer.config.model_type
    if model_type not in SITES:
        raise ConfigurationError(
            f"Adapters do not know where the sublayers of a {model_type!r} model "
            f"({transformer.config._name_or_path}) are; supported: {sorted(SITES)}."
        )
    return SITES[model_type]
