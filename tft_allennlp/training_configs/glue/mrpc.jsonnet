// GLUE mrpc: MRPC, accuracy and F1 of the paraphrase class. Base recipe and variables: ../common/glue.libsonnet
local glue = import '../common/glue.libsonnet';
glue(task='mrpc', directory='MRPC', validation_metric='+combined_score')
