// GLUE rte: RTE, accuracy. Base recipe and variables: ../common/glue.libsonnet
local glue = import '../common/glue.libsonnet';
glue(task='rte', directory='RTE', validation_metric='+accuracy')
