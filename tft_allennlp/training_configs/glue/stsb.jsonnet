// GLUE stsb: STS-B, regression, Pearson and Spearman correlation. Base recipe and variables: ../common/glue.libsonnet
local glue = import '../common/glue.libsonnet';
glue(task='stsb', directory='STS-B', validation_metric='+combined_score')
