// GLUE wnli: WNLI, accuracy. Base recipe and variables: ../common/glue.libsonnet
local glue = import '../common/glue.libsonnet';
glue(task='wnli', directory='WNLI', validation_metric='+accuracy')
