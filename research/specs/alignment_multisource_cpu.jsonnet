// Does the learned aligner's recall carry through injection? The same 11,000 Quora pairs
// aligned by the rule-based `tft_syntactic` (`tft_quora`, the domain grid's: 0.72 non-identical
// alignments per pair on Quora) and by the learned `tft_learned` (`tft_quora_learned`: 1.51),
// each injected into all-MiniLM-L6-v2 with `tft` and the paper's recipe and stopping rule
// (claims_multisource.libsonnet), fine-tuned on MRPC and STS-B with 1k examples and seeds 1-10,
// paired by seed with each other and with no injection; everything else is the 1k multi-source
// grid's. `none`, `tft_multi` and `tft_quora` are taken from the grids that ran them.
// The 74k corpus was the first design (`tft_multi` against the learned alignments of the same
// 74,326 pairs): a 74k injection takes 4-6 one-core hours without a break, longer than a
// session, and it was lost three times with its machine (research/results/alignment_multisource_cpu).
// TFT_EXPERIMENT_DIR=research/results/alignment_multisource_cpu/experiment.
local multisource_1k = import 'claims_multisource_cpu.jsonnet';

multisource_1k + {
  variants: ['none', 'tft_multi', 'tft_quora', 'tft_quora_learned'],
  tasks: ['mrpc', 'stsb'],
  reuse_from: [
    'research/results/claims_multisource_cpu/experiment',
    'research/results/claims_domain_cpu/experiment',
  ] + super.reuse_from,
}
