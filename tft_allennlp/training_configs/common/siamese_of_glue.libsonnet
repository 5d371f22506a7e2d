// The Siamese model of a GLUE task, from the task's cross-encoder config `glue`
// (../glue/<task>.jsonnet): ./siamese.libsonnet with the objective of a Siamese config
// (`objective_config`, one of ../siamese/*.jsonnet, its `model.objective`), and the data paths,
// validation metric and reader and loader extras (QQP's `lenient`, `bucket_batches` where a task sets it)
// of the task's config. `directory`: the task's GLUE folder. The experiment harness's siamese_*
// strategies (harness/tft_experiments/strategies/) call it.
local siamese = import 'siamese.libsonnet';

local extras(object, keys) = { [key]: object[key] for key in keys if std.objectHas(object, key) };

function(glue, directory, objective_config)
  siamese(task=glue.model.task, directory=directory,
          validation_metric=glue.trainer.validation_metric,
          objective=objective_config.model.objective) + {
    train_data_path: glue.train_data_path,
    validation_data_path: glue.validation_data_path,
    dataset_reader+: extras(glue.dataset_reader, ['lenient']),
    validation_dataset_reader+: extras(glue.validation_dataset_reader, ['lenient']),
    data_loader+: extras(glue.data_loader, ['bucket_batches']),
  }
