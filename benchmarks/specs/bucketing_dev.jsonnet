// Does length bucketing (tft_streaming's default) change dev scores? all-MiniLM-L6-v2 on 1k
// examples of MRPC and STS-B, 3 seeds, lr 1e-4, 2 epochs, with and without bucketing; the same
// seeds see the same subsample and the same initialisation, so the scores pair up by seed.
// The runs of an earlier bucketing (whole windows sorted) are kept as recipe directory
// bucketed_whole_window.
// Results: benchmarks/RESULTS.md ("Length bucketing").
{
  output_dir: std.extVar('TFT_EXPERIMENT_DIR'),
  base_models: { minilm: std.extVar('TFT_MODEL') },
  variants: ['none'],
  tasks: ['mrpc', 'stsb'],
  train_sizes: [1000],
  seeds: [1, 2, 3],
  recipes: {
    bucketed: { 'trainer.optimizer.lr': 1e-4 },
    unbucketed: { 'trainer.optimizer.lr': 1e-4, 'data_loader.bucket_batches': 0 },
    // The control: unbucketed again with another shuffling (Python's and NumPy's seed), the
    // same subsample and initialisation: how much batch order alone moves the scores.
    unbucketed_reshuffled: {
      'trainer.optimizer.lr': 1e-4, 'data_loader.bucket_batches': 0, random_seed: 7, numpy_seed: 7,
    },
  },
  glue_dir: std.extVar('GLUE_DIR'),
  glue_overrides: { 'trainer.num_epochs': 2 },
  keep_weights: false,
}
