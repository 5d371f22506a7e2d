// Issue 73, item 4: does the gain of injection survive tuning the baseline, and does the small
// injected model match the large plain one then? all-MiniLM-L6-v2 (TFT_MODEL) without injection,
// with `tft` (the claims grids' Quora-only injection) and with `tft_multi` (the 74k multi-source
// injection, claims_multisource.libsonnet), and all-mpnet-base-v2 (TFT_LARGE_MODEL) as it is;
// MRPC, STS-B and RTE with 1k training examples, fine-tuning seeds 1-10 on the dev set, paired.
//
// Every variant of every base is tuned on its own (`sweep_variants`) before its seeds run: 12
// learning rates, 1e-5 to 5e-4 (the recipe's 3e-5 and the sweep's 11), at 4 epochs, on fine-tuning
// seed 1's subsample with a fifth of it held out (`sweep_held_out_fraction`: 800 pairs train, 200
// validate); the dev set that the grid reports is never read for the choice.
//
// Float32 everywhere, with the configs' own trainer (the claims' bfloat16 needs an AVX512-BF16
// CPU; tft_mixed_precision refuses it elsewhere), so no run of the claims grids is reused: the
// injections are rebuilt on the machine that fine-tunes them (encoders are not in git).
// Otherwise the claims grids' settings: minilm_glue_cpu.jsonnet, 4 fine-tuning epochs
// (claims_4ep_cpu.libsonnet), the injections' corpora and recipes. 2 injections, 144 sweep runs
// and 120 reported ones. TFT_EXPERIMENT_DIR=research/results/tuned_cpu/experiment.
local four = import 'claims_4ep_cpu.libsonnet';
local multisource = import 'claims_multisource.libsonnet';
local cpu = import 'minilm_glue_cpu.jsonnet';
local float32 = { 'trainer.precision': 'float32' };

cpu + four + {
  run_fixed_recipes: false,
  base_models: { minilm: std.extVar('TFT_MODEL'), mpnet: std.extVar('TFT_LARGE_MODEL') },
  base_variants: { mpnet: ['none'] },
  reference_base: 'mpnet',
  variants: ['none', 'tft', 'tft_multi'],
  custom_variants: {
    tft_multi: multisource.custom_variants.tft_multi {
      injection_overrides+: float32,
    },
  },
  tasks: ['mrpc', 'stsb', 'rte'],
  train_sizes: [1000],
  seeds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  sweep: {
    'trainer.optimizer.lr': [1e-5, 1.5e-5, 2e-5, 4e-5, 6e-5, 8e-5, 1e-4, 1.5e-4, 2e-4, 3e-4, 5e-4],
    'trainer.num_epochs': [4],
  },
  sweep_variants: true,
  sweep_held_out_fraction: 0.2,
}
