// LoRA (Hu et al., 2021) through peft on any of the plugin's configs: the encoder frozen, a
// rank-r update (alpha / r) B A on the attention's query and value projections of every layer
// (ModernBERT: its fused query-key-value projection; tft_allennlp/modules/adapters/lora.py),
// trained with the classifier (or the injection heads) at the LoRA paper's GLUE settings for
// RoBERTa-base: r = 8, alpha = 8, lr 5e-4; the base configs' schedule and selection. The
// encoder's layer norms are frozen: the base configs' no-decay group keeps biases only (a
// pattern that matches no trained parameter makes AllenNLP warn on every run).
//
// `config`: a GLUE, Siamese or injection config (the encoder is the `tokens` embedder of
// `model.text_field_embedder`), or a multitask one (the encoder is `model.backbone`).
function(config, r=8, alpha=8, lr=5e-4)
  local adapters = { adapters: { type: 'lora', r: r, alpha: alpha } };
  config {
    model+: if std.objectHas(config.model, 'backbone') then {
      backbone+: { type: 'tft_pretrained_transformer' } + adapters,
    } else {
      text_field_embedder+: { token_embedders+: { tokens+: adapters } },
    },
    trainer+: { optimizer+: { lr: lr, parameter_groups: [[['bias'], { weight_decay: 0 }]] } },
  }
