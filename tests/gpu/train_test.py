"""
The distributed configs on the device: `allennlp train` with the `tft_mixed_precision` trainer
in one process on GPU 0 (bfloat16 where the card has it, float16 with a scaler), their model
stepping under DDP in a process group of one NCCL worker, and a run killed mid-epoch and resumed
with `--recover`. AllenNLP's trainer refuses distributed training with fewer than two workers,
and NCCL cannot put two on one GPU, so with one GPU the NCCL worker is set up here as
`allennlp train` sets up each of its workers, and steps its model without the trainer.
"""

import json
import math

import pytest
import torch
import torch.distributed as dist
from allennlp.common import Params, cached_transformers
from allennlp.data import Batch, DataLoader, DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.nn.parallel import TorchDdpAccelerator
from allennlp.nn.util import move_to_device

from tests import CONFIGS_ROOT
from tests.allennlp_cli import allennlp_train, write_config
from tft_allennlp.training.trainers.mixed_precision import amp_dtype

pytestmark = pytest.mark.gpu

INJECTION = {"dataset_reader.part": "all", "validation_dataset_reader.part": "all"}
CONFIGS = {"tft": INJECTION, "mrpc": {}}


def on_device(device: torch.device, precision: str):
    """Overrides that train on `device` in one process; float32 on the CPU rehearsal."""
    if device.type != "cuda":
        return {"distributed": None, "trainer.cuda_device": -1, "trainer.precision": "float32"}
    return {
        "distributed": None,
        "trainer.cuda_device": device.index,
        "trainer.precision": precision,
    }


def expected_log_line(device: torch.device, precision: str) -> str:
    if device.type != "cuda":
        return "Training in torch.float32."
    bfloat16 = torch.cuda.get_device_capability(device) >= (8, 0)
    if precision == "float16" or (precision == "auto" and not bfloat16):
        return "Training in torch.float16 with a gradient scaler."
    return "Training in torch.bfloat16."


@pytest.mark.parametrize(
    "config, precision", [("tft", "auto"), ("mrpc", "auto"), ("mrpc", "float16")]
)
def test_distributed_config_trains_with_amp_on_the_device(config, precision, device, tmp_path):
    overrides = {**CONFIGS[config], **on_device(device, precision), "trainer.num_epochs": 2}
    path = write_config(
        tmp_path / "config.json", CONFIGS_ROOT / f"distributed/{config}.jsonnet", overrides
    )
    result = allennlp_train(path, tmp_path / "run")
    assert result.returncode == 0, result.stderr[-3000:]
    assert expected_log_line(device, precision) in (tmp_path / "run/out.log").read_text()
    metrics = json.loads((tmp_path / "run/metrics.json").read_text())
    assert metrics["epoch"] == 1
    assert math.isfinite(metrics["training_loss"]) and math.isfinite(metrics["validation_loss"])


def test_the_distributed_mrpc_model_steps_under_ddp_in_one_nccl_worker(device, tmp_path):
    params = Params.from_file(str(CONFIGS_ROOT / "distributed/mrpc.jsonnet"))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(params.pop("train_data_path")))
    vocab = Vocabulary.from_params(params.pop("vocabulary"), instances=instances)
    batch = Batch(instances)
    batch.index_instances(vocab)
    tensors = move_to_device(batch.as_tensor_dict(), device)
    backend = "nccl" if device.type == "cuda" else "gloo"
    cuda_device = device.index if device.type == "cuda" else -1
    dtype = amp_dtype("auto", device) if device.type == "cuda" else None
    cached_transformers._clear_caches()
    dist.init_process_group(backend, init_method=f"file://{tmp_path}/store", rank=0, world_size=1)
    try:
        assert dist.get_backend() == backend
        # The accelerator `allennlp train` gives each worker of this config.
        accelerator = TorchDdpAccelerator(local_rank=0, world_size=1, cuda_device=cuda_device)
        model, wrapped = accelerator.wrap_model(
            Model.from_params(vocab=vocab, params=params.pop("model"))
        )
        scaler = wrapped.init_grad_scaler() if dtype == torch.float16 else None
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-5)
        for _ in range(3):
            optimizer.zero_grad()
            with torch.autocast(device.type, dtype=dtype or torch.float32, enabled=bool(dtype)):
                loss = wrapped.model(**tensors)["loss"]
            (scaler.scale(loss) if scaler else loss).backward()
            if scaler:
                scaler.step(optimizer)
                scaler.update()
            else:
                optimizer.step()
            assert math.isfinite(loss.item())
            done = torch.tensor(1, device=device)
            dist.all_reduce(done)  # as the trainer checks that no worker has run out of data
            assert done.item() == 1
    finally:
        dist.destroy_process_group()
    # DDP reduced every gradient (the unused BERT pooler has none) on the device.
    gradients = {name: p.grad for name, p in model.named_parameters() if p.grad is not None}
    assert len(gradients) > len(list(model.parameters())) // 2
    assert {gradient.device for gradient in gradients.values()} == {device}


def test_pinned_batches_reach_the_device_as_the_others_do(device):
    params = Params.from_file(str(CONFIGS_ROOT / "glue/mrpc.jsonnet"))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    path = params.pop("train_data_path")
    vocab = Vocabulary.from_instances(reader.read(path))
    batches = {}
    for pin_memory in (False, True):
        loader = DataLoader.from_params(
            Params({"type": "tft_streaming", "batch_size": 4, "pin_memory": pin_memory}),
            reader=reader,
            data_path=path,
        )
        loader.index_with(vocab)
        loader.set_target_device(device)
        batches[pin_memory] = list(loader)
    assert len(batches[True]) == len(batches[False]) > 1
    for pinned, plain in zip(batches[True], batches[False]):
        ids = pinned["tokens"]["tokens"]["token_ids"]
        assert ids.device == device
        assert torch.equal(ids, plain["tokens"]["tokens"]["token_ids"])
        assert torch.equal(pinned["label"], plain["label"])


def test_a_killed_run_recovers_where_it_stopped(device, tmp_path):
    # float16 on the GPU: the gradient scaler's state goes through the checkpoint too.
    overrides = {
        **on_device(device, "float16"),
        "data_loader.batch_size": 3,
        "trainer.num_epochs": 3,
        "trainer.checkpointer.save_every_num_batches": 1,
    }
    config = CONFIGS_ROOT / "distributed/mrpc.jsonnet"
    plain = write_config(tmp_path / "plain.json", config, overrides)
    killed = write_config(
        tmp_path / "killed.json",
        config,
        overrides,
        lambda params: params["trainer"]["callbacks"].append(
            {"type": "test_sigkill", "epoch": 1, "batch": 2}
        ),
    )
    result = allennlp_train(plain, tmp_path / "plain")
    assert result.returncode == 0, result.stderr[-3000:]
    result = allennlp_train(killed, tmp_path / "killed")
    assert result.returncode == -9
    assert not (tmp_path / "killed/metrics.json").exists()
    result = allennlp_train(killed, tmp_path / "killed", "--recover")
    assert result.returncode == 0, result.stderr[-3000:]
    expected = json.loads((tmp_path / "plain/metrics.json").read_text())
    actual = json.loads((tmp_path / "killed/metrics.json").read_text())
    # Bit-identical on the CPU; on a GPU, kernels may sum in another order.
    tolerance = 0 if device.type != "cuda" else 1e-2
    for key in ("best_validation_accuracy", "best_validation_f1", "validation_loss"):
        assert actual[key] == pytest.approx(expected[key], rel=tolerance, abs=tolerance), key
