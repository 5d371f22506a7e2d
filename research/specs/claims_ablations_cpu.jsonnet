// Issue 18, claim 3 (H5, the paper's Table 5): which parts of the injection objective matter?
// `+sentence` (the sentential head alone), `+3way-PP` (the 3-way phrasal head alone),
// `+binary-PP` (a phrasal head alone, paraphrase vs in-paraphrase phrase pairs) against full
// `tft` and no injection, on MRPC and STS-B with 1k training examples and fine-tuning seeds
// 1-3, all-MiniLM-L6-v2.
// CPU cuts as minilm_glue_cpu.jsonnet (shortened injection, no weights) but the configs' own 4
// fine-tuning epochs (claims_4ep_cpu.libsonnet).
// TFT_EXPERIMENT_DIR=research/results/claims_ablations_cpu/experiment.
local four = import 'claims_4ep_cpu.libsonnet';
local cpu = import 'minilm_glue_cpu.jsonnet';

cpu + four + {
  // Only recipe 'tuned' is reported; 'paper' is one of its sweep's candidates.
  run_fixed_recipes: false,
  variants: ['none', 'tft', '+sentence', '+3way-PP', '+binary-PP'],
  tasks: ['mrpc', 'stsb'],
  train_sizes: [1000],
  seeds: [1, 2, 3],
  // Runs that other grids finished with the same config are taken from them: the `tft`
  // injection, the sweep and the runs without injection and with `tft` of MRPC and STS-B
  // (the size grid at 4 epochs, which takes this grid's in turn; the epochs probe).
  // Paths are relative to the repository root, where the README's commands run; a grid that
  // is not there, or whose run differs, is simply not reused (`experiments/reuse.py`).
  reuse_from: [
    'research/results/claims_size_4ep_cpu/experiment',
    'research/results/claims_size_epochs_cpu/experiment',
    'research/results/claims_size_cpu/experiment',
  ],
}
