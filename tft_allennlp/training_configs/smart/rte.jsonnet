// GLUE rte (RTE) with SMART regularisation (Jiang et al., 2020), lambda_s = mu = 1.
// Task config: ../glue/rte.jsonnet; SMART: ../common/smart.libsonnet
local smart = import '../common/smart.libsonnet';
smart(import '../glue/rte.jsonnet')
