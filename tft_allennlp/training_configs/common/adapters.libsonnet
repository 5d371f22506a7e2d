// Bottleneck adapters (Houlsby et al., 2019) on any of the plugin's configs, with the variants
// Mohebbi & Rajaee compare: the encoder frozen, in every layer an adapter d -> 64 -> d with GELU
// and a skip connection after the attention and the feed-forward output projections, trained
// with the classifier (or the injection heads) at their lr 3e-4, linear warmup over 10% then
// decay, best epoch on dev (the base configs' schedule and selection).
//
// Variants (trainable-parameter counts: tft_allennlp/modules/adapters/bottleneck_adapters.py):
//   houlsby       one adapter per layer, used after both sublayers (their Table 1 count);
//   not_shared    two adapters per layer, and the layers' layer norms trained too;
//   three_shared  one adapter for three consecutive layers.
//
// `config`: a GLUE, Siamese or injection config (the encoder is the `tokens` embedder of
// `model.text_field_embedder`), or a multitask one (the encoder is `model.backbone`).
local variants = {
  houlsby: { share_sublayers: true },
  not_shared: { train_layer_norms: true },
  three_shared: { share_every: 3, share_sublayers: true },
};

function(config, variant='houlsby', bottleneck=64, lr=3e-4)
  local adapters = { adapters: { type: 'tft_bottleneck', bottleneck: bottleneck } + variants[variant] };
  config {
    model+: if std.objectHas(config.model, 'backbone') then {
      backbone+: { type: 'tft_pretrained_transformer' } + adapters,
    } else {
      text_field_embedder+: { token_embedders+: { tokens+: adapters } },
    },
    trainer+: { optimizer+: { lr: lr } },
  }
