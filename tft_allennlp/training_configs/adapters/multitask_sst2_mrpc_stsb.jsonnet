// SST-2 + MRPC + STS-B on one frozen encoder with shared Houlsby adapters and a head per task
// (shuffled batches): common/adapters.libsonnet on multitask/sst2_mrpc_stsb.jsonnet.
local adapters = import '../common/adapters.libsonnet';
adapters(import '../multitask/sst2_mrpc_stsb.jsonnet', variant='houlsby')
