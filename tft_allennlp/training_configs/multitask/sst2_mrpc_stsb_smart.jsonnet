// sst2_mrpc_stsb.jsonnet (batches of the three tasks in a random order) with SMART on for
// SST-2 only, as Lai ("Investigation of BERT Fine-tuning Strategies") did: the SST-2 head's
// `sst2_logits` are regularised, the MRPC and STS-B batches train exactly as without it.
// SMART: ../common/smart.libsonnet (lambda_s = mu = 1).
local smart = import '../common/smart.libsonnet';
smart(import 'sst2_mrpc_stsb.jsonnet', outputs={ sst2_logits: 'classification' })
