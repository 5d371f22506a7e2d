// Fine-tuning on one sentence-pair or single-sentence task, BERT's recipe as kept by Arase &
// Tsujii (2019) for every model: [CLS] state -> dropout 0.1 -> linear; batch 32, AdamW lr 3e-5
// with linear warmup (10%) and decay, 4 epochs, max length 128. The GLUE configs
// (./glue.libsonnet) and a task of your own (docs/tasks.md) share it.
//
// Environment variables (defaults are set by the tft_allennlp plugin):
//   TFT_MODEL  Hugging Face hub name or local checkpoint directory (default bert-base-uncased),
//              e.g. the output of `allennlp tft-export` after paraphrase injection, or the
//              injection's model.tar.gz itself (its encoder is exported on the fly).
// Everything else is an ordinary key: `allennlp train ... -o '{"dataset_reader.train_size": 1000,
// "random_seed": 1, "numpy_seed": 1, "pytorch_seed": 1, "trainer.optimizer.lr": 1e-4}'`.
local model_name = std.extVar('TFT_MODEL');

// The task's metrics when its description names none (as `SentenceTask` defaults them).
local metrics_of(task) =
  if std.objectHas(task, 'metrics') then task.metrics
  else if std.objectHas(task, 'regression') && task.regression then ['pearson', 'spearman']
  else ['accuracy'];

// task: a GLUE task name or a task description, the reader's and the model's `task`;
// train_data_path, validation_data_path: its files; validation_metric: the metric that picks
// the best epoch (default for a description: `+combined_score` where the task has several
// metrics, else `+` its one metric; a GLUE name must give it).
function(task, train_data_path, validation_data_path, validation_metric=null)
  assert validation_metric != null || std.isObject(task) : 'give validation_metric for ' + task;
  local metrics = if std.isObject(task) then metrics_of(task) else [];
  local reader = {
    type: 'tft_glue',
    task: task,
    tokenizer: { type: 'tft_pretrained_transformer', model_name: model_name, add_special_tokens: false },
    token_indexers: { tokens: { type: 'tft_pretrained_transformer', model_name: model_name } },
    max_length: 128,
  };
  {
    // Only the training reader subsamples (`train_size`, for the low-resource runs).
    dataset_reader: reader { train_size: null, seed: 13370 },
    validation_dataset_reader: reader,
    train_data_path: train_data_path,
    validation_data_path: validation_data_path,
    // The labels come from the task (the model puts them in the vocabulary), not from a pass
    // over the data.
    vocabulary: { type: 'from_instances' },
    datasets_for_vocab_creation: [],
    // The checkpoint's config and tokenizer files, copied there by the tft_pretrained_transformer
    // components: model.tar.gz loads without the checkpoint (docs/archives.md).
    include_in_archive: ['pretrained_transformers'],
    model: {
      type: 'tft_glue_classifier',
      task: task,
      text_field_embedder: {
        token_embedders: {
          // Drops the checkpoint's unused pooler, which DDP would wait for, from any model.
          tokens: { type: 'tft_pretrained_transformer', model_name: model_name },
        },
      },
      dropout: 0.1,
    },
    // Streamed through a window of 100 batches, each window sorted by length as a whole,
    // without padding noise (ties in random order), cut into batches and shuffled
    // (docs/data_loading.md).
    data_loader: {
      type: 'tft_streaming',
      batch_size: 32,
      shuffle: true,
      max_instances_in_memory: 3200,
      bucket_batches: 100,
      padding_noise: 0.0,
    },
    validation_data_loader: { type: 'tft_streaming', batch_size: 64, max_instances_in_memory: 6400 },
    trainer: {
      num_epochs: 4,
      // PyTorch's AdamW, with its fused kernel where PyTorch has one (the CPU, CUDA).
      optimizer: {
        type: 'tft_adamw',
        lr: 3e-5,
        weight_decay: 0.01,
        parameter_groups: [[['bias', 'LayerNorm\\.weight'], { weight_decay: 0.0 }]],
      },
      learning_rate_scheduler: { type: 'tft_linear_with_warmup_fraction', warmup_fraction: 0.1 },
      grad_norm: 1.0,
      validation_metric: if validation_metric != null then validation_metric
                         else if std.length(metrics) > 1 then '+combined_score'
                         else '+' + metrics[0],
      // tft_rng_checkpoint and tft_recover_finished_run: `--recover` after a crash ends exactly
      // where an uninterrupted run would.
      callbacks: [
        { type: 'console_logger', should_log_inputs: false },
        { type: 'tft_rng_checkpoint' },
        { type: 'tft_recover_finished_run' },
        // Trainable and frozen parameters, in the log and parameter_counts.json.
        { type: 'tft_parameter_counts' },
      ],
      // Checkpoints written atomically, so that a kill while saving leaves one `--recover` reads.
      checkpointer: { type: 'tft_atomic' },
    },
  }
