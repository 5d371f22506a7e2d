"""
AllenNLP's `wandb` callback on the lock's wandb (`tft_host_patches/tracking_stack.py`), in W&B's
offline mode: the run's history, read back from the run file wandb writes.
"""

import json
import struct
from typing import List

from wandb.proto import wandb_internal_pb2

from tests import CONFIGS_ROOT
from tests.allennlp_cli import forked_allennlp

MRPC = str(CONFIGS_ROOT / "glue/mrpc.jsonnet")
# wandb's run file (`run-ID.wandb`) is a LevelDB log: a 7-byte header, then 32 KiB blocks of
# chunks, each with a 7-byte header (checksum, length, kind) and a part of a `Record` message.
BLOCK = 32768
WHOLE, LAST = 1, 4


def run_records(path) -> List[wandb_internal_pb2.Record]:
    data = path.read_bytes()
    assert data[:4] == b":W&B"
    records, message, position = [], b"", 7
    while position + 7 <= len(data):
        left = BLOCK - position % BLOCK
        _, length, kind = struct.unpack("<IHB", data[position : position + 7])
        if left < 7 or (length == 0 and kind == 0):  # a block's padding
            position += left
            continue
        message += data[position + 7 : position + 7 + length]
        position += 7 + length
        if kind in (WHOLE, LAST):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(message)
            records.append(record)
            message = b""
    return records


def test_a_run_is_tracked_offline_by_allennlps_wandb_callback(tmp_path, tiny_bert):
    config = tmp_path / "tracked.jsonnet"
    config.write_text(
        f"(import '{MRPC}') + "
        "{trainer+: {num_epochs: 2, callbacks+: [{type: 'wandb', project: 'tft'}]}}"
    )
    run = tmp_path / "run"
    environment = {"WANDB_MODE": "offline", "WANDB_CONFIG_DIR": str(tmp_path / "config")}
    (result,) = forked_allennlp(["train", str(config), "-s", str(run)], environments=[environment])
    assert result.returncode == 0, result.stderr[-3000:]
    assert "WANDB_API_KEY" not in result.stderr  # a warning about what an offline run needs not
    (offline,) = (run / "wandb").glob("offline-run-*")
    (run_file,) = offline.glob("run-*.wandb")
    records = run_records(run_file)
    kinds = [record.WhichOneof("record_type") for record in records]
    (started,) = [record.run for kind, record in zip(kinds, records) if kind == "run"]
    assert started.project == "tft"
    assert run_file.name == f"run-{started.run_id}.wandb"
    config_written = json.loads((run / "config.json").read_text())
    logged_config = {
        item.key or "/".join(item.nested_key): json.loads(item.value_json)
        for item in started.config.update
    }
    assert logged_config["trainer"]["num_epochs"] == 2
    assert logged_config["model"] == config_written["model"]
    # Each epoch's validation metrics, as metrics_epoch_N.json has them.
    history = [
        {
            item.key or "/".join(item.nested_key): json.loads(item.value_json)
            for item in record.history.item
        }
        for kind, record in zip(kinds, records)
        if kind == "history"
    ]
    epochs = [json.loads((run / f"metrics_epoch_{n}.json").read_text()) for n in (0, 1)]
    assert [entry["epoch"] for entry in history] == [0, 1]
    assert [entry["validation/loss"] for entry in history] == [
        epoch["validation_loss"] for epoch in epochs
    ]
    (exit_record,) = [record.exit for kind, record in zip(kinds, records) if kind == "exit"]
    assert exit_record.exit_code == 0
    assert (offline / "files/config.json").read_bytes() == (run / "config.json").read_bytes()
