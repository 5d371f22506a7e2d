// MRPC with not_shared bottleneck adapters on a frozen encoder: common/adapters.libsonnet.
local adapters = import '../common/adapters.libsonnet';
adapters(import '../glue/mrpc.jsonnet', variant='not_shared')
