// A small real grid for the wall time of `allennlp tft-experiment --jobs 2` against `--jobs 1`
// on the same machine: all-MiniLM-L6-v2 on 300 RTE examples, one epoch, 2 seeds x 2 learning
// rates (4 runs). Results: benchmarks/RESULTS.md ("Experiment grids in parallel").
{
  output_dir: std.extVar('TFT_EXPERIMENT_DIR'),
  base_models: { minilm: std.extVar('TFT_MODEL') },
  variants: ['none'],
  tasks: ['rte'],
  train_sizes: [300],
  seeds: [1, 2],
  recipes: { lr1e4: { 'trainer.optimizer.lr': 1e-4 }, lr2e4: { 'trainer.optimizer.lr': 2e-4 } },
  glue_dir: std.extVar('GLUE_DIR'),
  glue_overrides: { 'trainer.num_epochs': 1 },
  keep_weights: false,
}
