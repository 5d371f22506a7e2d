// Experiment spec for `allennlp tft-experiment`: does injecting the aligned Quora pairs help
// all-MiniLM-L6-v2 on MRPC, STS-B and RTE, with 1k examples and the whole training set?
// Two recipes are reported for every variant: the paper's (BERT's: lr 3e-5, 4 epochs), which
// leaves this small base nearly untrained at 1k examples, and "tuned": the best on dev of the
// paper's and lr 1e-4 / 2e-4 for the base model without injection, applied unchanged to every
// variant. Add e.g. 'trainer.num_epochs': [4, 8] to the sweep to tune epochs as well.
//
// Environment variables: TFT_MODEL (the base checkpoint), GLUE_DIR, TFT_PARAPHRASE_CORPUS (the
// output of `allennlp tft-align`), TFT_EXPERIMENT_DIR (where runs and results go).
{
  output_dir: std.extVar('TFT_EXPERIMENT_DIR'),
  base_models: { minilm: std.extVar('TFT_MODEL') },
  variants: ['none', 'tft', 'tft_simple'],
  tasks: ['mrpc', 'stsb', 'rte'],
  train_sizes: [1000, null],
  seeds: [1, 2, 3],
  recipes: { paper: {} },
  sweep: { 'trainer.optimizer.lr': [1e-4, 2e-4] },
  glue_dir: std.extVar('GLUE_DIR'),
  paraphrase_corpus: std.extVar('TFT_PARAPHRASE_CORPUS'),
  // Validate every 50 batches of 100 pairs, so the paper's stopping rule can act within the corpus.
  injection_overrides: { 'data_loader.batches_per_epoch': 50, 'trainer.num_epochs': 12 },
}
