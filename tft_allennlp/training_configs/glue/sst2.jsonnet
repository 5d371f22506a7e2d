// GLUE sst2: SST-2, accuracy. Base recipe and variables: ../common/glue.libsonnet
local glue = import '../common/glue.libsonnet';
glue(task='sst2', directory='SST-2', validation_metric='+accuracy')
