"""
Where a benchmark built on the test harness runs: this checkout, or another one (e.g. an older
commit's library, for "before" figures) with this checkout's harness files copied there first.
"""

import os
import shutil
import sys
from typing import Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def enter_tree(tree: str, harness: Sequence[str]) -> None:
    """
    Copies `harness` (paths relative to the checkout) into `tree` unless it is this checkout,
    then makes `tree` the working directory and the first import path, offline.
    """
    tree = os.path.abspath(tree)
    if tree != ROOT:
        for path in harness:
            shutil.copy(os.path.join(ROOT, path), os.path.join(tree, path))
    os.chdir(tree)
    sys.path.insert(0, tree)
    # The tree's own experiment harness too, over the one installed from this checkout.
    if os.path.isdir(os.path.join(tree, "harness")):
        sys.path.insert(0, os.path.join(tree, "harness"))
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
