// Issue 18, claim 5: how much does the CPU cut to 2 fine-tuning epochs (claims_size_cpu.jsonnet)
// cost each base? The base models without injection, all-MiniLM-L6-v2 (TFT_MODEL) and
// all-mpnet-base-v2 (TFT_LARGE_MODEL), fine-tuned for the configs' own 4 epochs at lr 1e-4 on
// MRPC and STS-B with 1k training examples (the size grid's subsample of seed 1), against the
// size grid's 2-epoch runs of the same lr, seed and subsample (its sweep candidate `lr0.0001`).
// A larger model with a low learning rate may need the longer schedule more than a small one:
// if so, the 2-epoch cut favours the small model in the size grid's comparison. The recipe is
// named as the sweep candidate of the 4-epoch size grid (claims_size_4ep_cpu.jsonnet), which
// takes these runs as its own.
local cpu = import 'minilm_glue_cpu.jsonnet';

cpu {
  base_models: { minilm: std.extVar('TFT_MODEL'), mpnet: std.extVar('TFT_LARGE_MODEL') },
  variants: ['none'],
  tasks: ['stsb', 'mrpc'],
  train_sizes: [1000],
  seeds: [1],
  recipes: { 'epochs4_lr0.0001': { 'trainer.optimizer.lr': 1e-4, 'trainer.num_epochs': 4 } },
  sweep: {},
}
