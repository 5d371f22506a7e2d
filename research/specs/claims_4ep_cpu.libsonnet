// The fine-tuning schedule of issue 18's grids at the configs' own 4 epochs (mixed into
// claims_size_4ep_cpu, claims_distant_cpu, claims_ablations_cpu). The CPU cut to 2 epochs of
// minilm_glue_cpu.jsonnet left all-mpnet-base-v2 unconverged on STS-B
// (research/results/claims_size_cpu/README.md), and it gave all-MiniLM-L6-v2 5 points less, so every
// claims grid fine-tunes for 4. Recipes: the paper's (`paper`, lr 3e-5) and lr 1e-4 / 2e-4,
// chosen on dev per base, task and size. The candidates are named `epochs4_lr0.0001` and
// `epochs4_lr0.0002`, so the grids share their runs without injection and of `tft`
// (`reuse_from`, same directories and configs).
{
  glue_overrides: { 'trainer.num_epochs': 4 },
  sweep: { 'trainer.optimizer.lr': [1e-4, 2e-4], 'trainer.num_epochs': [4] },
}
