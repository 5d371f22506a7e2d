// GLUE fine-tuning: the recipe of ./task.libsonnet (BERT's, as kept by Arase & Tsujii 2019) on
// one of the nine GLUE tasks, named by its entry in tft_allennlp/common/glue_tasks.py, the one
// table of their columns, labels and metrics. STS-B is a regression.
//
// Environment variables (defaults are set by the tft_allennlp plugin):
//   TFT_MODEL  Hugging Face hub name or local checkpoint directory (default bert-base-uncased),
//              e.g. the output of `allennlp tft-export` after paraphrase injection, or the
//              injection's model.tar.gz itself (its encoder is exported on the fly).
//   GLUE_DIR   the official GLUE download, $GLUE_DIR/<Task>/{train,dev}.tsv (default glue_data),
//              or hf:NAME for a Hugging Face dataset with GLUE's configs and splits, e.g.
//              hf:nyu-mll/glue (read as hf:nyu-mll/glue:<task>:train, ...).
// Everything else is an ordinary key: `allennlp train ... -o '{"dataset_reader.train_size": 1000,
// "random_seed": 1, "numpy_seed": 1, "pytorch_seed": 1, "trainer.optimizer.lr": 1e-4}'`.
local sentence_task = import 'task.libsonnet';
local glue_dir = std.extVar('GLUE_DIR');
local from_hub = std.startsWith(glue_dir, 'hf:');

// task: reader/model task name; directory: the task's GLUE folder; validation_metric: the
// metric that picks the best epoch; dev: dev file name (MNLI has dev_matched.tsv); hub_dev: the
// dev split's name in a Hugging Face GLUE dataset (MNLI has validation_matched).
function(task, directory, validation_metric, dev='dev.tsv', hub_dev='validation')
  sentence_task(
    task,
    train_data_path=if from_hub then std.join(':', [glue_dir, task, 'train'])
                    else glue_dir + '/' + directory + '/train.tsv',
    validation_data_path=if from_hub then std.join(':', [glue_dir, task, hub_dev])
                         else glue_dir + '/' + directory + '/' + dev,
    validation_metric=validation_metric,
  )
