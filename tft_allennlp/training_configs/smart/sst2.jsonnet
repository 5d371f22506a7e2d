// GLUE sst2 (SST-2) with SMART regularisation (Jiang et al., 2020), lambda_s = mu = 1.
// Task config: ../glue/sst2.jsonnet; SMART: ../common/smart.libsonnet
local smart = import '../common/smart.libsonnet';
smart(import '../glue/sst2.jsonnet')
