// Small against large again: all-MiniLM-L6-v2 (22M) injected on the 74k multi-source corpus
// (`tft_multi`, `tft_simple_multi`, claims_multisource.libsonnet) against all-mpnet-base-v2
// (110M, TFT_LARGE_MODEL) fine-tuned as it is; MRPC, STS-B and RTE with 1k examples, fine-tuning
// seeds 1-10, each base with the recipe its own sweep picked (claims_size_4ep_cpu.jsonnet's,
// reused). The report pairs every MiniLM variant with all-mpnet-base-v2, seed by seed.
// TFT_EXPERIMENT_DIR=research/results/claims_multisource_size_cpu/experiment.
local size = import 'claims_size_4ep_cpu.jsonnet';
local multisource = import 'claims_multisource.libsonnet';

size + multisource + {
  variants: ['none', 'tft_multi', 'tft_simple_multi'],
  injection_seeds: [1],
  seeds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  reuse_from: ['research/results/claims_multisource_cpu/experiment'] + super.reuse_from,
}
