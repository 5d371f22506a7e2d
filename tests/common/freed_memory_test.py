"""
`reuse_freed_memory`: a block as large as MiniLM's word-embedding gradient (30,522 x 384 floats,
47 MB: 11,446 pages of 4 KB), allocated, written and freed 20 times in a child process. glibc
maps each fresh, so every round the kernel faults in all its pages; with freed memory kept, the
rounds reuse the pages of the ones before.
"""

import json
import subprocess
import sys

ROUNDS = """
import json, resource, sys, torch
from tft_allennlp.common.freed_memory import reuse_freed_memory
set = reuse_freed_memory() if sys.argv[1] == "reuse" else None
faults = [0] * 20
for round in range(20):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    block = torch.empty(30522, 384).fill_(1.0)
    del block
    faults[round] = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
print(json.dumps({"set": set, "faults": faults}))
"""


def page_faults(mode):
    result = subprocess.run(
        [sys.executable, "-c", ROUNDS, mode], capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout.splitlines()[-1])


def test_without_it_every_round_faults_in_the_whole_block():
    faults = page_faults("plain")["faults"]
    assert all(count >= 11_446 for count in faults)


def test_with_it_the_rounds_reuse_the_freed_pages():
    reused = page_faults("reuse")
    assert reused["set"] is True
    # The first rounds still fault (the heap grows to hold the block); the rest reuse it.
    assert sum(count >= 11_446 for count in reused["faults"]) <= 5
    assert reused["faults"][-10:] == [0] * 10
