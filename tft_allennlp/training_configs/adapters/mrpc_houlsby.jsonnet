// MRPC with houlsby bottleneck adapters on a frozen encoder: common/adapters.libsonnet.
local adapters = import '../common/adapters.libsonnet';
adapters(import '../glue/mrpc.jsonnet', variant='houlsby')
