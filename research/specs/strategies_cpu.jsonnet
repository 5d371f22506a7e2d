// Experiment spec for `allennlp tft-experiment`: does injection help all-MiniLM-L6-v2 the same
// way under every fine-tuning strategy? The cross-encoder (`cross`), multitask training of
// SST-2, MRPC and STS-B on one encoder (three batch schedules) and Sentence-BERT's Siamese
// objectives, each on the base model and on its `tft` injection, with 1k training examples
// (the same subsample per seed for every strategy, and for every task of a multitask run) and
// seeds 1-3. Siamese strategies skip the tasks they do not apply to: SST-2 (single sentences)
// for all of them, MRPC for siamese_cosine_mse and STS-B for siamese_mnr.
// Recipe "tuned" alone: the best on dev of the paper's and lr 1e-4 / 2e-4 for the
// base cross-encoder without injection, applied unchanged to every strategy and variant.
//
// Cut to fit 2 CPU cores, as minilm_glue_cpu.jsonnet:
//   - 2 fine-tuning epochs instead of 4, for every strategy, recipe and variant alike;
//   - injection stops after 4 validation rounds of 50 batches of 100 instances;
//   - weights of finished GLUE runs are deleted (configs, metrics and logs are kept).
//
// Environment variables: TFT_MODEL (the base checkpoint, sentence-transformers/all-MiniLM-L6-v2),
// GLUE_DIR, TFT_PARAPHRASE_CORPUS (the output of `allennlp tft-align`), TFT_EXPERIMENT_DIR.
local cpu = import 'minilm_glue_cpu.jsonnet';

cpu {
  // Only recipe 'tuned' is reported; 'paper' is one of its sweep's candidates.
  run_fixed_recipes: false,
  variants: ['none', 'tft'],
  tasks: ['sst2', 'mrpc', 'stsb'],
  train_sizes: [1000],
  seeds: [1, 2, 3],
  strategies: [
    'cross',
    'multitask_shuffled',
    'multitask_sequential',
    'multitask_roundrobin',
    'siamese_softmax',
    'siamese_cosine_mse',
    'siamese_mnr',
  ],
}
