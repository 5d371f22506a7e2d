// Adapter injection: the paper's `tft` injection training only Houlsby adapters (and the
// injection heads) on a frozen encoder. `allennlp tft-export` then writes the unchanged encoder
// and the adapters beside it (adapters.json, adapters.th); fine-tune with them by giving the
// GLUE config's embedder `adapters: {type: 'tft_exported', directory: EXPORT_DIR}`.
local adapters = import '../common/adapters.libsonnet';
adapters(import '../injection/tft.jsonnet', variant='houlsby')
