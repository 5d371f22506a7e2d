// Issue 18, claims 1 and 4: does injection let a small model beat a 5x larger one on semantic
// equivalence, and how much do injection seeds move the result? all-MiniLM-L6-v2 (22M,
// TFT_MODEL) without injection, with `tft` and with `tft_simple`, each injected with seeds 1 and
// 2 (`tft_iseed2`, `tft_simple_iseed2`), against all-mpnet-base-v2 (110M, TFT_LARGE_MODEL)
// fine-tuned as it is; MRPC, STS-B and RTE with 1k training examples, fine-tuning seeds 1-3;
// each base with its own recipe tuned on dev (the sweep runs on both bases).
//
// Cut to fit 2 CPU cores, as minilm_glue_cpu.jsonnet, alike for every base and variant: 2
// fine-tuning epochs instead of 4; injection stops after 4 validation rounds of 50 batches of
// 100 instances; weights of finished GLUE runs are deleted. The whole training sets are left
// out: an all-mpnet-base-v2 epoch on MRPC's 3.7k pairs takes about 80 minutes on one core
// (research/results/mpnet_cpu), so they need a GPU (set train_sizes: [1000, null] there).
local cpu = import 'minilm_glue_cpu.jsonnet';

cpu {
  // Only recipe 'tuned' is reported; 'paper' is one of its sweep's candidates.
  run_fixed_recipes: false,
  base_models: { minilm: std.extVar('TFT_MODEL'), mpnet: std.extVar('TFT_LARGE_MODEL') },
  base_variants: { mpnet: ['none'] },
  // The report pairs every MiniLM variant with all-mpnet-base-v2 (same subsample and seed).
  reference_base: 'mpnet',
  variants: ['none', 'tft', 'tft_simple'],
  injection_seeds: [1, 2],
  tasks: ['mrpc', 'stsb', 'rte'],
  train_sizes: [1000],
  seeds: [1, 2, 3],
}
