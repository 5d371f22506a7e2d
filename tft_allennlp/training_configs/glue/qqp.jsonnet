// GLUE qqp: QQP, accuracy and F1 of the duplicate class. Base recipe and variables: ../common/glue.libsonnet
local glue = import '../common/glue.libsonnet';
// The official QQP files contain rows with missing fields: they are skipped, counted and logged.
glue(task='qqp', directory='QQP', validation_metric='+combined_score') + {
  dataset_reader+: { lenient: true },
  validation_dataset_reader+: { lenient: true },
}
