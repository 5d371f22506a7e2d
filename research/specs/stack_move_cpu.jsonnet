// Issue 72: the move to transformers 5, before/after. The cells of the 4-epoch size grid
// (claims_size_4ep_cpu.jsonnet, research/results/claims_size_4ep_cpu/) that the issue pairs,
// trained again with exactly their configs and nothing else: all-MiniLM-L6-v2 without
// injection and with `tft` (injection seed 1, the grid's shortened injection), and
// all-mpnet-base-v2 without injection; MRPC and STS-B at 1k; fine-tuning seeds 1-3; each base
// and task with the recipe the 4-epoch grid's sweep chose there:
//   minilm, MRPC and STS-B: epochs4_lr0.0002 (lr 2e-4, 4 epochs)
//   mpnet,  MRPC: paper (lr 3e-5, the configs' 4 epochs);  STS-B: epochs4_lr0.0001 (lr 1e-4)
// No sweep runs again: the recipes are fixed ones named as the sweep's candidates, so the run
// directories and configs (config_sha256) are the committed grid's. A spec's recipes apply to
// every base and task, so the three recipe cells are three parts of this spec, picked by
// TFT_STACK_PART (`minilm`, the default, `mpnet_mrpc`, `mpnet_stsb`), each in its own output
// directory, $TFT_EXPERIMENT_DIR/<part>. No reuse_from: every run trains (taking the committed runs would
// measure nothing). Commands and the before table: research/results/stack_move_cpu/README.md.
//
//   TFT_STACK_PART=minilm TFT_EXPERIMENT_DIR=research/results/stack_move_cpu/after \
//     allennlp tft-experiment research/specs/stack_move_cpu.jsonnet --jobs 1
local four = import 'claims_4ep_cpu.libsonnet';
local cpu = import 'minilm_glue_cpu.jsonnet';

local epochs4_lr = function(lr) { 'trainer.num_epochs': 4, 'trainer.optimizer.lr': lr };
local parts = {
  minilm: {
    base_models: { minilm: std.extVar('TFT_MODEL') },
    variants: ['none', 'tft'],
    tasks: ['mrpc', 'stsb'],
    recipes: { 'epochs4_lr0.0002': epochs4_lr(2e-4) },
  },
  mpnet_mrpc: {
    base_models: { mpnet: std.extVar('TFT_LARGE_MODEL') },
    variants: ['none'],
    tasks: ['mrpc'],
    recipes: { paper: {} },
    paraphrase_corpus: null,
  },
  mpnet_stsb: {
    base_models: { mpnet: std.extVar('TFT_LARGE_MODEL') },
    variants: ['none'],
    tasks: ['stsb'],
    recipes: { 'epochs4_lr0.0001': epochs4_lr(1e-4) },
    paraphrase_corpus: null,
  },
};
local part = std.extVar('TFT_STACK_PART');
assert std.objectHas(parts, part) :
       'TFT_STACK_PART is one of ' + std.join(', ', std.objectFields(parts)) + ', not ' + part;

cpu + four + {
  output_dir: std.extVar('TFT_EXPERIMENT_DIR') + '/' + part,
  train_sizes: [1000],
  seeds: [1, 2, 3],
  sweep: {},
  run_fixed_recipes: true,
  injection_seeds: [1],
} + parts[part]
