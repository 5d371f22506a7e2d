// Multitask GLUE fine-tuning: one shared encoder, one `tft_glue_head` per task, on AllenNLP's
// multitask machinery (MultiTaskDatasetReader, tft_multitask data loader, MultiTaskModel).
// Each task's reader, data paths and labels are those of its single-task config
// (../glue/<task>.jsonnet, same TFT_MODEL and GLUE_DIR variables); the recipe (AdamW 3e-5,
// warmup 10%, 4 epochs, batch 32) is BERT's, shared with those configs. The best epoch is
// the one with the best `glue_average`, the mean of the tasks' GLUE scores.
//
// Every batch holds one task. `scheduler` orders the batches of an epoch:
//   tft_shuffled            all batches in a random order (seeded), the default;
//   tft_sequential          all batches of one task, then the next (tasks in alphabetical
//                           order: jsonnet sorts object keys);
//   homogeneous_roundrobin  AllenNLP's: one batch of each task in turn.
// (AllenNLP's `roundrobin` mixes tasks in a batch, which fails on GLUE's different label
// fields.) Validation always reads every instance once, task after task, in file order.
//
// All classification tasks of one config share the `labels` namespace (the tft_glue reader
// has no per-task label namespace), so they must have the same label set: the binary tasks
// (CoLA, SST-2, MRPC, QQP, WNLI), or QNLI + RTE, or MNLI; STS-B goes with any of them. The
// heads put their task's labels in the vocabulary, and reject a namespace that holds others.
//
// cuda_devices: GPU ids for DistributedDataParallel. A batch uses one head only, so the other
// heads' parameters get no gradient: DDP then needs `find_unused_parameters`.
local glue = {
  cola: import '../glue/cola.jsonnet',
  sst2: import '../glue/sst2.jsonnet',
  mrpc: import '../glue/mrpc.jsonnet',
  stsb: import '../glue/stsb.jsonnet',
  qqp: import '../glue/qqp.jsonnet',
  mnli: import '../glue/mnli.jsonnet',
  qnli: import '../glue/qnli.jsonnet',
  rte: import '../glue/rte.jsonnet',
  wnli: import '../glue/wnli.jsonnet',
};
local model_name = std.extVar('TFT_MODEL');
local schedulers = ['tft_shuffled', 'tft_sequential', 'homogeneous_roundrobin'];

function(tasks, scheduler='tft_shuffled', batch_size=32, cuda_devices=null)
  local per_task(field) = { [task]: glue[task][field] for task in tasks };
  local num_devices = if cuda_devices == null then 1 else std.length(cuda_devices);
  local window = 100 * batch_size;
  assert std.length(tasks) > 0 : 'tasks: give at least one GLUE task';
  assert std.all([std.objectHas(glue, task) for task in tasks]) : 'unknown task in ' + tasks;
  assert std.member(schedulers, scheduler) : 'scheduler: one of ' + std.join(', ', schedulers);
  {
    dataset_reader: { type: 'multitask', readers: per_task('dataset_reader') },
    validation_dataset_reader: { type: 'multitask', readers: per_task('validation_dataset_reader') },
    train_data_path: per_task('train_data_path'),
    validation_data_path: per_task('validation_data_path'),
    vocabulary: { type: 'from_instances' },
    datasets_for_vocab_creation: [],
    include_in_archive: ['pretrained_transformers'],
    model: {
      type: 'tft_glue_multitask',
      backbone: {
        // The plugin's backbone drops the checkpoint's unused pooler (the heads pool the [CLS]
        // state themselves; `tft-export` writes it back) and makes the archive self-contained.
        type: 'tft_pretrained_transformer',
        model_name: model_name,
      },
      heads: { [task]: { type: 'tft_glue_head', task: task, model_name: model_name, dropout: 0.1 } for task in tasks },
      // The reader's `tokens` field is the backbone's `text` argument.
      arg_name_mapping: { backbone: { tokens: 'text' } },
    },
    // Streamed: each task holds at most `window` instances (plus AllenNLP's shuffle pool).
    data_loader: {
      type: 'tft_multitask',
      scheduler: { type: scheduler, batch_size: std.floor(batch_size / num_devices) },
      shuffle: true,
      max_instances_in_memory: { [task]: window for task in tasks },
    },
    // Without its own loader, validation would reuse the training loader (shuffling, any
    // instances_per_epoch sampling): every validation instance once, in a fixed order.
    validation_data_loader: {
      type: 'tft_multitask',
      scheduler: { type: 'tft_sequential', batch_size: 2 * batch_size },
      shuffle: false,
      max_instances_in_memory: { [task]: 2 * window for task in tasks },
    },
    trainer: glue[tasks[0]].trainer {
      validation_metric: '+glue_average',
      // On GPUs: bfloat16 where the card has it, float16 with a gradient scaler elsewhere.
      [if cuda_devices != null then 'type']: 'tft_mixed_precision',
    },
  } + (if cuda_devices == null then {} else {
         distributed: {
           cuda_devices: cuda_devices,
           ddp_accelerator: { type: 'torch', find_unused_parameters: true },
         },
       })
