// STS-B with LoRA on a frozen encoder: common/lora.libsonnet.
local lora = import '../common/lora.libsonnet';
lora(import '../glue/stsb.jsonnet')
