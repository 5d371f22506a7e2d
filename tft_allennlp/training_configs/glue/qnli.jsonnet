// GLUE qnli: QNLI, accuracy. Base recipe and variables: ../common/glue.libsonnet
local glue = import '../common/glue.libsonnet';
glue(task='qnli', directory='QNLI', validation_metric='+accuracy')
