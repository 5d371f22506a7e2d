// sst2_mrpc_stsb.jsonnet on several GPUs (DistributedDataParallel, AMP), each GPU taking 1/n
// of the batch. Heads unused in a batch get no gradient, which DDP allows only with
// `find_unused_parameters` (set by ../common/multitask.libsonnet when cuda_devices is given).
//
// Environment variable (default set by the tft_allennlp plugin):
//   TFT_CUDA_DEVICES  comma-separated GPU ids, e.g. "0,1,2,3" (default "0,1")
local multitask = import '../common/multitask.libsonnet';
local devices = std.map(std.parseInt, std.split(std.extVar('TFT_CUDA_DEVICES'), ','));
multitask(tasks=['sst2', 'mrpc', 'stsb'], scheduler='tft_shuffled', cuda_devices=devices)
