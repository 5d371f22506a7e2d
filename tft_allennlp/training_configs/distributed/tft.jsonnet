// TFT injection (../injection/tft.jsonnet) on several GPUs with AMP: ../common/distributed_amp.libsonnet
local distributed_amp = import '../common/distributed_amp.libsonnet';
distributed_amp(import '../injection/tft.jsonnet')
