// GLUE mnli: MNLI, accuracy on dev matched (evaluate dev_mismatched.tsv with the same model). Base recipe and variables: ../common/glue.libsonnet
local glue = import '../common/glue.libsonnet';
glue(task='mnli', directory='MNLI', validation_metric='+accuracy', dev='dev_matched.tsv',
     hub_dev='validation_matched')
