// Size against domain: one injection per source at the same size (11,000 pairs each of Twitter
// URL, ParaSCI-ACL and Quora: `tft_twitter`, `tft_parasci`, `tft_quora`), beside the 74k mixed
// corpus (`tft_multi`) and no injection, all with the paper's recipe and stopping rule
// (claims_multisource.libsonnet); fine-tuned on MRPC and STS-B with 1k examples and seeds 1-10,
// with the recipe the base's sweep picked (the 1k grids', reused).
// TFT_EXPERIMENT_DIR=research/results/claims_domain_cpu/experiment.
local multisource_1k = import 'claims_multisource_cpu.jsonnet';

multisource_1k + {
  variants: ['none', 'tft_multi', 'tft_twitter', 'tft_parasci', 'tft_quora'],
  tasks: ['mrpc', 'stsb'],
  reuse_from: ['research/results/claims_multisource_cpu/experiment'] + super.reuse_from,
}
