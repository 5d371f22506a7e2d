// Does sorting STS-B's training batches by length cost dev Pearson? all-MiniLM-L6-v2 on 1k
// STS-B examples, lr 1e-4, 2 epochs (the recipe of bucketing_dev.jsonnet), seeds 1-4, with the
// GLUE configs' bucketing (each window of 100 batches sorted by length as a whole, no padding
// noise), the same with the output's bias at 2.5, and without bucketing; the same seed sees
// the same subsample and initialisation in all three.
// Results: benchmarks/RESULTS.md ("STS-B and length bucketing").
{
  output_dir: std.extVar('TFT_EXPERIMENT_DIR'),
  base_models: { minilm: std.extVar('TFT_MODEL') },
  variants: ['none'],
  tasks: ['stsb'],
  train_sizes: [1000],
  seeds: [1, 2, 3, 4],
  recipes: {
    bucketed: {
      'trainer.optimizer.lr': 1e-4, 'data_loader.bucket_batches': 100, 'data_loader.padding_noise': 0.0,
    },
    // Bucketed, with the regression output starting at the middle of STS-B's 0-5 range.
    bucketed_centred: {
      'trainer.optimizer.lr': 1e-4, 'data_loader.bucket_batches': 100, 'data_loader.padding_noise': 0.0,
      'model.initializer': {
        regexes: [['_task_output._output_layer.bias', { type: 'constant', val: 2.5 }]],
      },
    },
    unbucketed: { 'trainer.optimizer.lr': 1e-4, 'data_loader.bucket_batches': 0 },
  },
  glue_dir: std.extVar('GLUE_DIR'),
  glue_overrides: { 'trainer.num_epochs': 2 },
  keep_weights: false,
}
