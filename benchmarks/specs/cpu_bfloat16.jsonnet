// Does fine-tuning in bfloat16 on the CPU (`tft_mixed_precision`, `precision: 'bfloat16'`: the
// forward passes autocast, weights and optimizer stay float32) cost dev scores? all-MiniLM-L6-v2
// on 1k MRPC and STS-B examples, the claims grids' fine-tuning (4 epochs, lr 1e-4), seeds 1-3,
// float32 against bfloat16; each seed's subsample and initial weights are shared, so the
// differences pair up by seed. Results: benchmarks/RESULTS.md ("bfloat16 on the CPU").
local recipe = { 'trainer.optimizer.lr': 1e-4, 'trainer.num_epochs': 4 };
{
  output_dir: std.extVar('TFT_EXPERIMENT_DIR'),
  base_models: { minilm: std.extVar('TFT_MODEL') },
  variants: ['none'],
  tasks: ['mrpc', 'stsb'],
  train_sizes: [1000],
  seeds: [1, 2, 3],
  recipes: {
    float32: recipe,
    bfloat16: recipe + { 'trainer.type': 'tft_mixed_precision', 'trainer.precision': 'bfloat16' },
  },
  glue_dir: std.extVar('GLUE_DIR'),
  keep_weights: false,
}
