// STS-B (regression) with Houlsby adapters on a frozen encoder: common/adapters.libsonnet.
local adapters = import '../common/adapters.libsonnet';
adapters(import '../glue/stsb.jsonnet', variant='houlsby')
