// GLUE MRPC fine-tuning (../glue/mrpc.jsonnet) on several GPUs with AMP: ../common/distributed_amp.libsonnet
local distributed_amp = import '../common/distributed_amp.libsonnet';
distributed_amp(import '../glue/mrpc.jsonnet')
