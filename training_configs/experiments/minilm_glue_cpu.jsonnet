// The grid of minilm_glue.jsonnet cut to what 2 CPU cores run in about two hours; the results
// committed under results/minilm_cpu/ come from it. What is cut, and why:
//   - training size 1k only (the whole training sets are minilm_glue.jsonnet's job, on a GPU);
//   - 2 fine-tuning epochs instead of 4, for every recipe and variant alike;
//   - injection stops after 4 validation rounds of 50 batches of 100 instances (about one pass
//     over the aligned Quora pairs) instead of up to 12;
//   - weights of finished GLUE runs are deleted (configs, metrics and logs are kept).
// Sequence length, batch size, dropout and everything else are the configs' own.
local full = import 'minilm_glue.jsonnet';

full {
  train_sizes: [1000],
  glue_overrides: { 'trainer.num_epochs': 2 },
  injection_overrides: { 'data_loader.batches_per_epoch': 50, 'trainer.num_epochs': 4 },
  keep_weights: false,
}
