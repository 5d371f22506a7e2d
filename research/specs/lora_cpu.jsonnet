// Experiment spec for `allennlp tft-experiment` (issue 73, item 1): full fine-tuning of
// all-MiniLM-L6-v2 against bottleneck adapters (Houlsby; lr 3e-4) and LoRA (rank 8, alpha 8 on
// the attention's query and value projections; lr 5e-4), the encoder frozen for both, on MRPC and
// STS-B with 1k training examples (the same subsample per seed for every strategy), seeds 1-5,
// no injection. The table shows each run's trained parameters; each run's metrics.json holds its
// training time and peak memory.
// Recipe "tuned" alone, as adapters_cpu.jsonnet: the base cross-encoder's choice; the adapters
// and LoRA keep their own lr. Cut to fit 2 CPU cores as minilm_glue_cpu.jsonnet (2 epochs of
// full fine-tuning); the adapters and LoRA train for 10 epochs, which adapters_cpu.jsonnet found
// they need at 1k examples (with 2 they stayed at MRPC's majority class).
//
// Environment variables: TFT_MODEL (the base checkpoint, sentence-transformers/all-MiniLM-L6-v2),
// GLUE_DIR, TFT_EXPERIMENT_DIR.
local cpu = import 'minilm_glue_cpu.jsonnet';

cpu {
  run_fixed_recipes: false,
  variants: ['none'],
  tasks: ['mrpc', 'stsb'],
  train_sizes: [1000],
  seeds: [1, 2, 3, 4, 5],
  strategies: ['cross', 'adapters_houlsby', 'lora'],
  strategy_overrides: {
    [frozen]: { 'trainer.num_epochs': 10 }
    for frozen in ['adapters_houlsby', 'lora']
  },
}
