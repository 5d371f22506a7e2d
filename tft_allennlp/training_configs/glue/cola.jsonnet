// GLUE cola: CoLA, Matthews correlation. Base recipe and variables: ../common/glue.libsonnet
local glue = import '../common/glue.libsonnet';
glue(task='cola', directory='CoLA', validation_metric='+mcc')
