// The multi-source injections shared by the claims_multisource*_cpu grids: all-MiniLM-L6-v2
// injected with the paper's own recipe (Adam lr 5e-5, batch 100, dropout 0.2: the configs') over
// whole epochs until the second decrease of the dev phrasal accuracy (at most 20), with a
// checkpoint every 30 minutes so that a killed injection loses at most that much (the harness
// resumes it with --recover). Corpora: `bash research/scripts/multisource_corpora.sh` (runs/corpora/):
//   tft_multi, tft_simple_multi   the 74,326 pairs of Twitter URL, ParaSCI-ACL and Quora, mixed
//   tft_twitter, tft_parasci, tft_quora   11,000 pairs of one source each (`tft`)
//   tft_quora_learned   tft_quora's 11,000 pairs aligned by the learned aligner `tft_learned`
//                       (`tft`); the others are aligned by the rule-based `tft_syntactic`
// Every run of these grids, injections and fine-tunings, autocasts to bfloat16 on the CPU
// (tft_mixed_precision): 1.6-1.9 times faster steps on this machine's AVX512-BF16, dev scores
// within 0.1 point of float32's but MRPC F1 (-1.0 +- 0.6, 3 seeds) and the same injection
// accuracies (benchmarks/RESULTS.md, "bfloat16 on the CPU").
local bfloat16 = { 'trainer.type': 'tft_mixed_precision', 'trainer.precision': 'bfloat16' };
local paper_injection = bfloat16 + {
  'data_loader.batches_per_epoch': null,
  'trainer.num_epochs': 20,
  'trainer.checkpointer.save_every_num_seconds': 1800,
  // Batches from sorted whole windows of 5,000 pairs, as the GLUE configs make them: the three
  // sources' lengths differ (ParaSCI's pairs are twice Quora's), and groups of 4 batches padded
  // a third of every batch. 1.35 times faster steps (benchmarks/RESULTS.md).
  'data_loader.bucket_batches': 50,
  'data_loader.padding_noise': 0.0,
  'validation_data_loader.bucket_batches': 50,
  'validation_data_loader.padding_noise': 0.0,
};
local injection(variant, corpus) = {
  variant: variant,
  paraphrase_corpus: 'runs/corpora/' + corpus + '.jsonl',
  injection_overrides: paper_injection,
};
{
  glue_overrides+: bfloat16,
  custom_variants: {
    tft_multi: injection('tft', 'multisource'),
    tft_simple_multi: injection('tft_simple', 'multisource'),
    tft_twitter: injection('tft', 'twitter_11k'),
    tft_parasci: injection('tft', 'parasci_11k'),
    tft_quora: injection('tft', 'quora_11k'),
    tft_quora_learned: injection('tft', 'quora_11k_learned'),
  },
}
