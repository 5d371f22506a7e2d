// Issue 18, claims 1, 4 and 5: the size grid (claims_size_cpu.jsonnet) with the configs' own 4
// fine-tuning epochs instead of the CPU cut to 2 (claims_4ep_cpu.libsonnet). The cut cost
// all-mpnet-base-v2 far more than all-MiniLM-L6-v2 (claims_size_epochs_cpu.jsonnet,
// research/results/claims_size_cpu/README.md: STS-B at 1k, lr 1e-4, Pearson 56.6 after 2 epochs against
// 73.4 after 3 of 4), so the comparison of the two bases needs the longer schedule.
// TFT_EXPERIMENT_DIR=research/results/claims_size_4ep_cpu/experiment.
local four = import 'claims_4ep_cpu.libsonnet';
local size = import 'claims_size_cpu.jsonnet';

size + four + {
  // The 2-epoch grid's injections; the epochs probe's runs, which are this grid's sweep runs
  // `epochs4_lr0.0001`; the MiniLM runs it shares with the ablation and distant-task grids
  // (same configs; `reuse_from`, paths from the repository root).
  reuse_from: [
    'research/results/claims_size_cpu/experiment',
    'research/results/claims_size_epochs_cpu/experiment',
    'research/results/claims_ablations_cpu/experiment',
    'research/results/claims_distant_cpu/experiment',
  ],
}
