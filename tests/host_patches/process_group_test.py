import subprocess
import sys

# A gloo process group of one, as in each of `allennlp train`'s workers. The check registered
# before importing the plugin runs after the plugin's exit handler (atexit runs last in, first
# out), so it sees what the plugin left behind.
SCRIPT = """
import atexit, sys
import torch.distributed as dist
atexit.register(lambda: print("alive at exit:", dist.is_initialized()))
import tft_allennlp
dist.init_process_group("gloo", init_method="file://{store}", rank=0, world_size=1)
print("alive before exit:", dist.is_initialized())
"""


def test_the_plugin_destroys_the_process_group_before_the_interpreter_exits(tmp_path):
    script = SCRIPT.format(store=tmp_path / "store")
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.splitlines() == ["alive before exit: True", "alive at exit: False"]
