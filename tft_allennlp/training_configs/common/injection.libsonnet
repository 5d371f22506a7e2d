// Paraphrasal relation injection (Arase & Tsujii, 2019, Algorithm 4.1): a pretrained BERT learns
// to tell paraphrase sentence pairs from random ones and aligned phrase pairs from random and
// in-paraphrase ones, before GLUE fine-tuning. Paper settings: Adam lr 5e-5, batch 100, dropout
// 0.2, early stopping at the second decrease of the dev phrasal accuracy.
//
// Environment variables (defaults set by the tft_allennlp plugin):
//   TFT_MODEL              hub name, local checkpoint directory or an injection's model.tar.gz
//                          (default bert-base-uncased)
//   TFT_PARAPHRASE_CORPUS  aligned paraphrase pairs, JSON lines (docs/injection.md);
//                          a held-out 5% of its lines (seeded) is the validation set.
// Very large corpora: validate every N batches with `-o '{"data_loader.batches_per_epoch": N}'`.
local model_name = std.extVar('TFT_MODEL');
local corpus = std.extVar('TFT_PARAPHRASE_CORPUS');

// pooling: span extractor type; features: phrase-pair feature type; binary: 2-way phrase labels;
// loss_weights: {sentence, phrase}, 0 removes a head (ablations); stop_metric: the validation
// metric of the early-stopping rule.
function(pooling, features, binary=false, loss_weights={ sentence: 1.0, phrase: 1.0 },
         stop_metric='phrase_accuracy') {
  local reader = {
    type: 'tft_aligned_paraphrases',
    tokenizer: { type: 'tft_pretrained_transformer', model_name: model_name, add_special_tokens: false },
    token_indexers: { tokens: { type: 'tft_pretrained_transformer', model_name: model_name } },
    max_length: 128,
    negative_sampler: { type: 'tft_paper', random_pairs_per_paraphrase: 1 },
    binary: binary,
    validation_fraction: 0.05,
    seed: 13370,
  },
  dataset_reader: reader { part: 'train' },
  validation_dataset_reader: reader { part: 'validation' },
  train_data_path: corpus,
  validation_data_path: corpus,
  // The labels of the reader, declared rather than collected by a pass over the corpus.
  vocabulary: {
    type: 'from_instances',
    tokens_to_add: {
      labels: ['paraphrase', 'random'],
      phrase_labels: if binary then ['paraphrase', 'in_paraphrase'] else ['paraphrase', 'random', 'in_paraphrase'],
    },
  },
  datasets_for_vocab_creation: [],
  // The checkpoint's config and tokenizer files, copied there by the tft_pretrained_transformer
  // components: model.tar.gz loads without the checkpoint (docs/archives.md).
  include_in_archive: ['pretrained_transformers'],
  model: {
    type: 'tft_paraphrase_injector',
    text_field_embedder: {
      token_embedders: {
        tokens: { type: 'tft_pretrained_transformer', model_name: model_name },
      },
    },
    // input_dim comes from the embedder.
    span_extractor: { type: pooling },
    phrase_pair_features: { type: features },
    dropout: 0.2,
    loss_weights: loss_weights,
  },
  // Streamed: at most 5,000 instances (50 batches) in memory, sorted by length within them
  // (docs/data_loading.md).
  data_loader: { type: 'tft_streaming', batch_size: 100, shuffle: true, max_instances_in_memory: 5000 },
  validation_data_loader: { type: 'tft_streaming', batch_size: 100, max_instances_in_memory: 5000 },
  trainer: {
    num_epochs: 20,
    optimizer: { type: 'adam', lr: 5e-5 },
    grad_norm: 1.0,
    validation_metric: '+' + stop_metric,
    callbacks: [
      { type: 'console_logger', should_log_inputs: false },
      { type: 'tft_stop_after_decreases', metric: stop_metric, decreases: 2 },
      { type: 'tft_rng_checkpoint' },
      { type: 'tft_recover_finished_run' },
      // Trainable and frozen parameters, in the log and parameter_counts.json.
      { type: 'tft_parameter_counts' },
    ],
    // Checkpoints written atomically, so that a kill while saving leaves one `--recover` reads.
    checkpointer: { type: 'tft_atomic' },
  },
}
