// Does more, more varied paraphrase data help? all-MiniLM-L6-v2 without injection, with the
// Quora-only injections of the claims grids (`tft`, `tft_simple`: 10,367 Quora pairs, about one
// pass, the CPU cut) and with the multi-source ones (`tft_multi`, `tft_simple_multi`: the 74,326
// pairs of Twitter URL, ParaSCI-ACL and Quora mixed, injected with the paper's own recipe: Adam
// lr 5e-5, batch 100, dropout 0.2, whole epochs until the second decrease of the dev phrasal
// accuracy, at most 20), fine-tuned on MRPC, STS-B, RTE, SST-2 and CoLA with 1k examples and
// fine-tuning seeds 1-10 (each seed its own subsample, the same for every variant), with the
// recipe the base's sweep picks on dev (claims_4ep_cpu.libsonnet).
//
// The injections: claims_multisource.libsonnet; the Quora-only ones read the claims grids'
// corpus (research/scripts/claims_grids.sh). Everything else is the claims grids'
// (minilm_glue_cpu.jsonnet, 4 fine-tuning epochs), so their finished runs are taken, not rerun.
// TFT_EXPERIMENT_DIR=research/results/claims_multisource_cpu/experiment.
local four = import 'claims_4ep_cpu.libsonnet';
local cpu = import 'minilm_glue_cpu.jsonnet';
local multisource = import 'claims_multisource.libsonnet';

cpu + four + multisource + {
  // Only recipe 'tuned' is reported; 'paper' is one of its sweep's candidates.
  run_fixed_recipes: false,
  variants: ['none', 'tft', 'tft_simple', 'tft_multi', 'tft_simple_multi'],
  tasks: ['mrpc', 'stsb', 'rte', 'sst2', 'cola'],
  train_sizes: [1000],
  seeds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  // Paths from the repository root: the size and distant-task grids hold seeds 1-3 of `none`,
  // `tft` and `tft_simple`, their injections and the sweeps.
  reuse_from: [
    'research/results/claims_size_4ep_cpu/experiment',
    'research/results/claims_size_cpu/experiment',
    'research/results/claims_distant_cpu/experiment',
  ],
}
