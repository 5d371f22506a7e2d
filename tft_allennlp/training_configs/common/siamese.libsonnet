// Siamese (bi-encoder) GLUE fine-tuning, as Sentence-BERT (Reimers & Gurevych, 2019): each
// sentence encoded on its own by the shared transformer, mean-pooled over its wordpieces, and
// the two vectors compared by a registrable objective (`objective`: tft_softmax,
// tft_cosine_mse, tft_cosine_embedding or tft_multiple_negatives_ranking). The recipe (batch 32,
// AdamW lr 3e-5 with linear warmup and decay, 4 epochs, max length 128 per sentence) and the
// environment variables (TFT_MODEL, GLUE_DIR) are the GLUE base's: ./glue.libsonnet.
local glue = import 'glue.libsonnet';

// task, directory, validation_metric, dev, hub_dev: as in glue.libsonnet; objective: the
// model's `objective` (its options only: the model passes vocab, task and dimensions).
function(task, directory, validation_metric, objective, dev='dev.tsv', hub_dev='validation')
  local base = glue(task, directory, validation_metric, dev, hub_dev);
  base + {
    // Each sentence in its own sequence: tokens1 = [CLS] sentence1 [SEP], tokens2 likewise.
    dataset_reader+: { pair_encoding: 'separate' },
    validation_dataset_reader+: { pair_encoding: 'separate' },
    model: {
      type: 'tft_siamese_pair_classifier',
      task: task,
      text_field_embedder: base.model.text_field_embedder,
      // seq2vec_encoder: the default, masked mean pooling (`boe` with `averaged: true`).
      objective: objective,
    },
    data_loader+: { sorting_keys: ['tokens1', 'tokens2'] },
    validation_data_loader+: { sorting_keys: ['tokens1', 'tokens2'] },
  }
