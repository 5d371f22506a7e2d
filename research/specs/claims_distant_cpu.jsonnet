// Issue 18, claim 2 (H4): injection should not help tasks far from paraphrase: SST-2 and CoLA
// (their official training sets re-split into train/dev, ../shared/data/README.md) with 1k and
// 5k training examples, fine-tuning seeds 1-3, all-MiniLM-L6-v2 without injection, with `tft`
// and with `tft_simple`. The paper saw drops there.
// CPU cuts as minilm_glue_cpu.jsonnet (shortened injection, no weights) but the configs' own 4
// fine-tuning epochs (claims_4ep_cpu.libsonnet).
// TFT_EXPERIMENT_DIR=research/results/claims_distant_cpu/experiment.
local four = import 'claims_4ep_cpu.libsonnet';
local cpu = import 'minilm_glue_cpu.jsonnet';

cpu + four + {
  // Only recipe 'tuned' is reported; 'paper' is one of its sweep's candidates.
  run_fixed_recipes: false,
  variants: ['none', 'tft', 'tft_simple'],
  tasks: ['sst2', 'cola'],
  train_sizes: [1000, 5000],
  seeds: [1, 2, 3],
  // Runs that other grids finished with the same config are taken from them: the `tft` and
  // `tft_simple` injections (the size grids).
  // Paths are relative to the repository root, where the README's commands run; a grid that
  // is not there, or whose run differs, is simply not reused (`experiments/reuse.py`).
  reuse_from: [
    'research/results/claims_size_4ep_cpu/experiment',
    'research/results/claims_size_cpu/experiment',
  ],
}
