// sst2_mrpc_stsb.jsonnet with all batches of one task before the next (MRPC, SST-2, STS-B).
local multitask = import '../common/multitask.libsonnet';
multitask(tasks=['sst2', 'mrpc', 'stsb'], scheduler='tft_sequential')
