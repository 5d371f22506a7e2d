// GLUE mrpc (MRPC) with SMART regularisation (Jiang et al., 2020), lambda_s = mu = 1.
// Task config: ../glue/mrpc.jsonnet; SMART: ../common/smart.libsonnet
local smart = import '../common/smart.libsonnet';
smart(import '../glue/mrpc.jsonnet')
