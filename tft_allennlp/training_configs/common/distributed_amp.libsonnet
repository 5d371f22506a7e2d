// Distributed data parallel + automatic mixed precision, for GPU users: wraps any config of this
// project. Each GPU gets 1/n of the batch (n GPUs over all nodes), so the global batch stays the
// paper's (GLUE 32, injection 100), rounded down to a multiple of n. The tft_mixed_precision
// trainer runs the forward passes in bfloat16 on GPUs that have it (A100, H100, ...) and in
// float16 with a gradient scaler on older ones; it refuses a CPU worker.
// `-o '{"trainer.precision": "bfloat16"}'` (or float16, float32: no AMP) forces one.
//
// Environment variables (defaults set by the tft_allennlp plugin; docs/distributed.md):
//   TFT_CUDA_DEVICES     this node's GPU ids, comma-separated, e.g. "0,1,2,3" (default "0,1")
//   TFT_NUM_NODES        machines, each running `allennlp train ... --node-rank R` (default 1)
//   TFT_PRIMARY_ADDRESS  address of node rank 0, when TFT_NUM_NODES > 1 (default "127.0.0.1")
//   TFT_PRIMARY_PORT     a free port there, the same for every node (default 29500)
local devices = std.map(std.parseInt, std.split(std.extVar('TFT_CUDA_DEVICES'), ','));
local nodes = std.parseInt(std.extVar('TFT_NUM_NODES'));
local workers = std.length(devices) * nodes;

function(config) config {
  distributed: { cuda_devices: devices } + (
    if nodes == 1 then {} else {
      num_nodes: nodes,
      primary_address: std.extVar('TFT_PRIMARY_ADDRESS'),
      primary_port: std.parseInt(std.extVar('TFT_PRIMARY_PORT')),
    }
  ),
  data_loader+: { batch_size: std.floor(config.data_loader.batch_size / workers) },
  trainer+: { type: 'tft_mixed_precision', precision: 'auto' },
}
