// The grid of minilm_glue.jsonnet cut to fit 2 CPU cores; the results committed under
// research/results/minilm_cpu/ come from it (1k examples: every seed; whole training sets: seed 1 only,
// STS-B seeds 1-2, where the CPU time ran out; running the spec again finishes the rest).
// What is cut, and why:
//   - 2 fine-tuning epochs instead of 4, for every recipe and variant alike;
//   - injection stops after 4 validation rounds of 50 batches of 100 instances (about one pass
//     over the aligned Quora pairs) instead of up to 12;
//   - weights of finished GLUE runs are deleted (configs, metrics and logs are kept).
// Sequence length, batch size, dropout and everything else are the configs' own.
local full = import '../../harness/tft_experiments/specs/minilm_glue.jsonnet';

full {
  glue_overrides: { 'trainer.num_epochs': 2 },
  injection_overrides: { 'data_loader.batches_per_epoch': 50, 'trainer.num_epochs': 4 },
  keep_weights: false,
}
