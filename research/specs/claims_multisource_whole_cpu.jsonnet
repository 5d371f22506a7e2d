// Does the multi-source injection change the verdict on the whole training sets? The grid of
// claims_whole_cpu.jsonnet (MRPC, STS-B, RTE with every training example, fine-tuning seeds 1-3,
// 4 epochs, the recipe its sweep picked) with the multi-source injections added
// (claims_multisource.libsonnet). 3 seeds, not 10: a whole-set run takes 13-28 one-core
// minutes, ten times a 1k run.
// Cut, for CPU time only: `tft_simple_multi`. On this machine it would be one more 74k injection
// (about 7 one-core hours: the earlier machine's encoder is gone and its weights do not reproduce
// here) and 9 whole-set fine-tunings (about 3 more), while at 1k, with 10 seeds, it differs from
// `tft_multi` by at most 1 point on every task, significant nowhere (H3,
// research/results/claims/verdicts_multisource.md).
// Cut whole (28 November), after two sweep runs of `none`: `tft_multi` is a 74k injection of 4-6
// one-core hours that must end, and be fine-tuned here (about 4 more core-hours), on the machine
// that builds it, since encoders are not in git and do not reproduce across machines; the
// project's machines may not outlive a 3-hour session, and the 74k injection of the aligner grid
// was lost three times (research/results/alignment_multisource_cpu/README.md).
// research/scripts/multisource_grids.sh no longer runs it; it stays as the record of that design.
// TFT_EXPERIMENT_DIR=research/results/claims_multisource_whole_cpu/experiment.
local whole = import 'claims_whole_cpu.jsonnet';
local multisource = import 'claims_multisource.libsonnet';

whole + multisource + {
  variants: ['none', 'tft', 'tft_simple', 'tft_multi'],
  // The whole-set grid's runs (`none`, `tft`, `tft_simple`, the sweep) and the multi-source
  // injections of the 1k grid; paths from the repository root.
  reuse_from: [
    'research/results/claims_whole_cpu/experiment',
    'research/results/claims_multisource_cpu/experiment',
    'research/results/claims_size_4ep_cpu/experiment',
    'research/results/claims_size_cpu/experiment',
  ],
}
