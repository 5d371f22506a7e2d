// Multitask GLUE: SST-2 (single sentence), MRPC (pair, F1/accuracy) and STS-B (regression) on
// one shared encoder, batches of the three tasks in a random order. Base: ../common/multitask.libsonnet
local multitask = import '../common/multitask.libsonnet';
multitask(tasks=['sst2', 'mrpc', 'stsb'], scheduler='tft_shuffled')
