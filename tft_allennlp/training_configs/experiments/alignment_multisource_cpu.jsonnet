// Does the learned aligner's recall carry through injection? The 74,326 multi-source paraphrase
// pairs aligned by the rule-based `tft_syntactic` (`tft_multi`: 0.82 non-identical alignments
// per pair) and by the learned `tft_learned` (`tft_multi_learned`), each injected into
// all-MiniLM-L6-v2 with `tft` and the paper's recipe (claims_multisource.libsonnet), fine-tuned
// on MRPC and STS-B with 1k examples and seeds 1-10, paired by seed with each other and with no
// injection; everything else is the 1k multi-source grid's, whose runs are taken.
// TFT_EXPERIMENT_DIR=results/alignment_multisource_cpu/experiment.
local multisource_1k = import 'claims_multisource_cpu.jsonnet';

multisource_1k + {
  variants: ['none', 'tft_multi', 'tft_multi_learned'],
  tasks: ['mrpc', 'stsb'],
  reuse_from: ['results/claims_multisource_cpu/experiment'] + super.reuse_from,
}
