// Distributed data parallel + automatic mixed precision, for GPU users: wraps any config of this
// project. Each GPU gets 1/n of the batch, so the global batch stays the paper's (GLUE 32,
// injection 100). The tft_mixed_precision trainer runs the forward passes in bfloat16 on GPUs
// that have it (A100, H100, ...) and in float16 with a gradient scaler on older ones; it refuses
// a CPU worker. `-o '{"trainer.precision": "bfloat16"}'` (or float16, float32: no AMP) forces one.
//
// Environment variable (default set by the tft_allennlp plugin):
//   TFT_CUDA_DEVICES  comma-separated GPU ids, e.g. "0,1,2,3" (default "0,1")
local devices = std.map(std.parseInt, std.split(std.extVar('TFT_CUDA_DEVICES'), ','));

function(config) config {
  distributed: { cuda_devices: devices },
  data_loader+: { batch_size: std.floor(config.data_loader.batch_size / std.length(devices)) },
  trainer+: { type: 'tft_mixed_precision', precision: 'auto' },
}
