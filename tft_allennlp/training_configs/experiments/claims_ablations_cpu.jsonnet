// Issue 18, claim 3 (H5, the paper's Table 5): which parts of the injection objective matter?
// `+sentence` (the sentential head alone), `+3way-PP` (the phrasal head alone), `+binary-PP`
// (paraphrase vs random phrase pairs) against full `tft` and no injection, on MRPC and STS-B
// with 1k training examples and fine-tuning seeds 1-3, all-MiniLM-L6-v2.
// CPU cuts as minilm_glue_cpu.jsonnet (2 fine-tuning epochs, shortened injection, no weights).
local cpu = import 'minilm_glue_cpu.jsonnet';

cpu {
  // Only recipe 'tuned' is reported; 'paper' is one of its sweep's candidates.
  run_fixed_recipes: false,
  variants: ['none', 'tft', '+sentence', '+3way-PP', '+binary-PP'],
  tasks: ['mrpc', 'stsb'],
  train_sizes: [1000],
  seeds: [1, 2, 3],
  // Runs that other grids finished with the same config are taken from them: the `tft`
  // injection, the MiniLM sweep and the runs without injection of MRPC and STS-B at 1k
  // (adapters and strategies grids).
  // Paths are relative to the repository root, where the README's commands run; a grid that
  // is not there, or whose run differs, is simply not reused (`experiments/reuse.py`).
  reuse_from: [
    'results/adapters_cpu/experiment',
    'results/claims_size_cpu/experiment',
    'results/strategies_cpu/experiment',
  ],
}
